import { describe, expect, it } from 'vitest';
import { ChangeMemo, changeLevel, createLogger, parseLevel } from '../../src/agent/log.js';

describe('logger', () => {
  it('writes JSON lines at or above the level', () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'info', write: (l) => lines.push(l), now: () => new Date('2026-12-02T00:00:00Z') });
    log.debug('hidden');
    log.info('session up', { peer: '192.0.2.1', n: 1n });
    log.error('boom', { err: new Error('bad') });
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { time: '2026-12-02T00:00:00.000Z', level: 'info', msg: 'session up', peer: '192.0.2.1', n: '1' },
      { time: '2026-12-02T00:00:00.000Z', level: 'error', msg: 'boom', err: 'bad' },
    ]);
  });

  it("parses Calico's logSeverityScreen values and rejects others", () => {
    expect(parseLevel('Warning')).toBe('warning');
    expect(parseLevel('warn')).toBe('warning');
    expect(parseLevel('Trace')).toBe('trace');
    expect(() => parseLevel('loud')).toThrow('invalid log level "loud"');
  });

  it('changeLevel logs the change where it shows, and nothing when the level stays', () => {
    const lines: { level: string; msg: string; from?: string }[] = [];
    const log = createLogger({ level: 'info', write: (l) => lines.push(JSON.parse(l)) });
    changeLevel(log, 'info', 'x');
    changeLevel(log, 'warning', 'x');
    changeLevel(log, 'error', 'x');
    changeLevel(log, 'debug', 'x');
    expect(lines.map((l) => [l.msg, l.from])).toEqual([
      ['log level warning (x)', 'info'],
      ['log level debug (x)', 'error'],
    ]);
    expect(log.level).toBe('debug');
  });
});

describe('ChangeMemo: log when changed', () => {
  it('changed() is true for the first value of a topic and for each different one, per topic', () => {
    const m = new ChangeMemo();
    expect([m.changed('a', [1]), m.changed('a', [1]), m.changed('b', [1]), m.changed('a', [2]), m.changed('a', [1]), m.changed('a', [1])]).toEqual([
      true,
      false,
      true,
      true,
      true,
      false,
    ]);
  });
  it('added() gives the items not in the previous list of the topic', () => {
    const m = new ChangeMemo();
    expect(m.added('i', [{ x: 1 }, { x: 2 }])).toEqual([{ x: 1 }, { x: 2 }]);
    expect(m.added('i', [{ x: 2 }, { x: 3 }])).toEqual([{ x: 3 }]);
    expect(m.added('i', [{ x: 1 }])).toEqual([{ x: 1 }]);
    expect(m.added('j', [{ x: 1 }])).toEqual([{ x: 1 }]);
  });
});
