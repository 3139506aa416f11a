/**
 * Issue 14 §2: max-prefix limits per family, over loopback between two speakers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseMaxPrefixes, defaultMaxPrefixes } from '../../src/agent/max-prefixes.js';
import { formatMaxPrefixLimit, maxPrefixData, parseMaxPrefixSpec, PrefixLimits } from '../../src/speaker/max-prefix.js';
import type { MaxPrefixLimit } from '../../src/speaker/types.js';
import { eventually, link, peerStatus, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

async function pair(limit: MaxPrefixLimit, routes: number) {
  const logs: string[] = [];
  const a = await speaker('127.0.0.1', { asn: 65001 });
  const b = await speaker('127.0.0.2', { asn: 65002, log: (level, msg) => logs.push(`${level} ${msg}`) });
  for (let i = 0; i < routes; i++) a.originate(`198.18.${i >> 8}.${i & 255}/32`);
  b.originate('203.0.113.0/24');
  // Waits on the event: with action restart the session may be up for only a moment (polling could miss it).
  const up = new Promise<void>((resolve) => b.once('peerUp', () => resolve()));
  link(a, b, { families: ['ipv4'] }, { families: ['ipv4'], maxPrefixes: { ipv4: limit } });
  await up;
  return { a, b, logs };
}

describe('max-prefix', () => {
  it('block: refuses new routes past the limit, keeps the session and our own advertisement, and says so', async () => {
    const { a, b, logs } = await pair({ limit: 100, action: 'block' }, 150);
    const fam = await eventually('150 announcements seen', () => {
      const f = peerStatus(b, '127.0.0.1').counters.families?.ipv4;
      return f && f.received + (f.refused ?? 0) === 150 ? f : undefined;
    });
    expect(fam).toMatchObject({ received: 100, accepted: 100, limit: 100, limitState: 'exceeded', refused: 50 });
    expect(b.received('127.0.0.1')).toHaveLength(100);
    expect(peerStatus(b, '127.0.0.1').state).toBe('Established');
    // The node's own advertisement stays up at the router.
    await eventually(
      'our route at the router',
      () =>
        a
          .received('127.0.0.2')
          .map((r) => r.prefix.toString())
          .join() === '203.0.113.0/24',
    );
    expect(peerStatus(b, '127.0.0.1').state).toBe('Established');
    expect(logs.filter((l) => l.includes('prefix limit 100 reached: refusing new IPv4 routes'))).toHaveLength(1);
    // Withdrawals still apply; below the limit new routes are taken again.
    for (let i = 0; i < 10; i++) a.withdraw(`198.18.0.${i}/32`);
    await eventually('withdrawn', () => peerStatus(b, '127.0.0.1').counters.families?.ipv4.received === 90);
    a.originate('198.18.200.1/32');
    await eventually('a new route under the limit', () => peerStatus(b, '127.0.0.1').counters.families?.ipv4.received === 91);
  });

  it('block: once under the warning threshold, the refused routes are asked for again with ROUTE-REFRESH (RFC 2918) and taken', async () => {
    const { a, b, logs } = await pair({ limit: 100, action: 'block', warningThreshold: 80 }, 150);
    await eventually('150 announcements seen', () => {
      const f = peerStatus(b, '127.0.0.1').counters.families?.ipv4;
      return f && f.received + (f.refused ?? 0) === 150 ? f : undefined;
    });
    expect(peerStatus(b, '127.0.0.1').counters.families?.ipv4.refusedRecovery).toBe('route-refresh');
    const before = peerStatus(a, '127.0.0.2').counters.messagesIn;
    // The router withdraws 30 of the routes we hold: 70 left, under the 80 % threshold. The 50 refused are still at the router.
    const held = b
      .received('127.0.0.1')
      .map((r) => r.prefix.toString())
      .slice(0, 30);
    for (const p of held) a.withdraw(p);
    // At 70 (under the 80 % threshold) b asks the router again; without that it would stay at 70: the router has no reason to resend the refused ones.
    await eventually('the refresh', () => logs.some((l) => l.includes('asking the peer for its routes again (ROUTE-REFRESH) to take the 50 refused')));
    const f = await eventually('refused routes taken after the refresh', () => {
      const x = peerStatus(b, '127.0.0.1').counters.families?.ipv4;
      return x?.received === 100 && x.refused === 50 + 20 ? x : undefined;
    });
    // 120 sent again: 30 fill the room, the other 20 (of the 50) are refused again; the 70 held are replacements.
    expect(f).toMatchObject({ received: 100, limit: 100, limitState: 'exceeded' });
    expect(peerStatus(a, '127.0.0.2').counters.messagesIn).toBeGreaterThan(before);
    expect(logs.filter((l) => l.includes('ROUTE-REFRESH'))).toHaveLength(1);
    expect(peerStatus(b, '127.0.0.1').state).toBe('Established');
  });

  it('restart: Cease 6/1 to the peer, and the session comes back after restartAfter', async () => {
    const { a, b, logs } = await pair({ limit: 100, action: 'restart', restartAfter: 1 }, 150);
    const down = await eventually('a sees the Cease', () => peerStatus(a, '127.0.0.2').lastError);
    expect(down).toMatchObject({ code: 6, subcode: 1, direction: 'received' });
    expect(peerStatus(b, '127.0.0.1').lastError).toMatchObject({ code: 6, subcode: 1, direction: 'sent' });
    expect(logs.some((l) => l.startsWith('error') && l.includes('exceed the limit 100: closing the session (Cease 6/1), reconnecting in 1 s'))).toBe(true);
    // It comes back (and, the table unchanged, goes down again): at least two Ceases over time.
    await eventually('a second session', () => logs.filter((l) => l.includes('closing the session (Cease 6/1)')).length >= 2, 20_000);
  });

  it('warn: keeps everything, logs and reports the limit exceeded', async () => {
    const { b, logs } = await pair({ limit: 100, action: 'warn' }, 150);
    const f = await eventually('150 routes', () => {
      const x = peerStatus(b, '127.0.0.1').counters.families?.ipv4;
      return x?.received === 150 ? x : undefined;
    });
    expect(f).toMatchObject({ limit: 100, limitState: 'exceeded', refused: 0 });
    expect(logs.some((l) => l.startsWith('warning') && l.includes('150 exceed the limit 100 (action warn'))).toBe(true);
  });

  it('the warning threshold: status says warning, the log says it once', async () => {
    const { b, logs } = await pair({ limit: 200, action: 'block', warningThreshold: 75 }, 160);
    await eventually('160 routes', () => peerStatus(b, '127.0.0.1').counters.families?.ipv4.received === 160);
    expect(peerStatus(b, '127.0.0.1').counters.families?.ipv4.limitState).toBe('warning');
    expect(logs.filter((l) => l.includes('IPv4 prefixes at') && l.includes('of limit 200 (warning threshold 75%)'))).toHaveLength(1);
  });

  it('rejects bad settings naming the field', async () => {
    const b = await speaker('127.0.0.2', { asn: 65002 });
    expect(() => b.addPeer({ address: '127.0.0.9', asn: 65009, maxPrefixes: { ipv4: { limit: 0 } } })).toThrow(
      'peer 127.0.0.9: maxPrefixes.ipv4.limit must be an integer 1..2147483647, got 0',
    );
    expect(() => b.addPeer({ address: '127.0.0.9', asn: 65009, maxPrefixes: { ipv4: { limit: 5, action: 'drop' as 'block' } } })).toThrow(
      'maxPrefixes.ipv4.action must be warn, block or restart',
    );
  });
});

describe('max-prefix pieces', () => {
  it('Cease 6/1 data is AFI, SAFI and the limit (RFC 4486 §4)', () => {
    expect([...maxPrefixData('ipv4', 20000)]).toEqual([0, 1, 1, 0, 0, 0x4e, 0x20]);
    expect([...maxPrefixData('ipv6', 1)]).toEqual([0, 2, 1, 0, 0, 0, 1]);
  });

  it('logs each crossing once, again only after falling back under the threshold', () => {
    const l = new PrefixLimits({ ipv4: { limit: 10, action: 'warn' } }, '192.0.2.1');
    expect(l.check('ipv4', 8, 0).map((a) => a.type)).toEqual(['log']);
    expect(l.check('ipv4', 9, 0)).toEqual([]);
    expect(l.check('ipv4', 11, 0).map((a) => a.type)).toEqual(['log']);
    expect(l.check('ipv4', 12, 0)).toEqual([]);
    expect(l.check('ipv4', 3, 0).map((a) => a.type)).toEqual(['log']);
    expect(l.check('ipv4', 8, 0).map((a) => a.type)).toEqual(['log']);
    expect(l.check('ipv6', 1000, 0)).toEqual([]);
  });

  it('block: asks again (refresh) only under the warning threshold and only for what was refused since the last ask', () => {
    const l = new PrefixLimits({ ipv4: { limit: 100, action: 'block', warningThreshold: 80 } }, '192.0.2.1');
    expect(l.check('ipv4', 100, 5, true).map((a) => a.type)).toEqual(['log']); // limit reached
    expect(l.check('ipv4', 99, 5, true)).toEqual([]); // under the limit, over the threshold: no refresh storm
    expect(l.check('ipv4', 79, 5, true).map((a) => a.type)).toEqual(['refresh', 'log']); // asked again; back under the threshold
    expect(l.outstanding('ipv4', 5)).toBe(0);
    expect(l.check('ipv4', 70, 5, true)).toEqual([]); // nothing new refused since: no second ask
    expect(l.check('ipv4', 100, 9, true).map((a) => a.type)).toEqual(['log']); // 4 more refused after the refresh
    expect(l.outstanding('ipv4', 9)).toBe(4);
    expect(l.check('ipv4', 50, 9, true).find((a) => a.type === 'refresh')).toMatchObject({
      family: 'ipv4',
      message: expect.stringContaining('to take the 4 refused'),
    });
    l.reset();
    expect(l.outstanding('ipv4', 3)).toBe(3);
  });

  it('block without route refresh: says once that the refused routes stay refused until the session restarts', () => {
    const l = new PrefixLimits({ ipv6: { limit: 10, action: 'block' } }, '2001:db8::1');
    l.check('ipv6', 10, 2, false);
    const said = l.check('ipv6', 5, 2, false);
    expect(said.map((a) => a.type)).not.toContain('refresh');
    expect(said.find((a) => a.type === 'log' && a.message.includes('does not support route refresh'))).toMatchObject({
      level: 'warning',
      message: expect.stringContaining('the 2 refused routes stay refused until the peer announces them again or the session restarts'),
    });
    expect(l.check('ipv6', 4, 2, false)).toEqual([]);
    expect(l.outstanding('ipv6', 2)).toBe(2);
  });

  it('warn and restart never ask for a refresh', () => {
    for (const action of ['warn', 'restart'] as const) {
      const l = new PrefixLimits({ ipv4: { limit: 10, action } }, '192.0.2.1');
      l.check('ipv4', 11, 3, true);
      expect(l.check('ipv4', 1, 3, true).map((a) => a.type)).not.toContain('refresh');
    }
  });

  it('LIMIT[,ACTION[,WARN%]] as the flag and the annotation write it', () => {
    expect(parseMaxPrefixSpec('50000')).toEqual({ limit: 50000, action: 'block', warningThreshold: 80 });
    expect(parseMaxPrefixSpec(' 50000 , restart , 90% ')).toEqual({ limit: 50000, action: 'restart', warningThreshold: 90 });
    expect(parseMaxPrefixSpec('0')).toBeNull();
    expect(() => parseMaxPrefixSpec('0,block')).toThrow('LIMIT 0 (no limit) takes no ACTION or WARN%');
    expect(() => parseMaxPrefixSpec('10,block,0')).toThrow('WARN% "0" is not a percentage 1-100');
    expect(() => parseMaxPrefixSpec('1,2,3,4')).toThrow('too many parts');
    expect(() => parseMaxPrefixSpec('99999999999')).toThrow('LIMIT must be at most 2147483647');
    expect(formatMaxPrefixLimit({ limit: 5, action: 'warn', warningThreshold: 50 })).toBe('5,warn,50%');
    expect(formatMaxPrefixLimit(null)).toBe('none');
  });

  it('the agent flag and default', () => {
    expect(defaultMaxPrefixes()).toEqual({
      ipv4: { limit: 20000, action: 'block', warningThreshold: 80 },
      ipv6: { limit: 20000, action: 'block', warningThreshold: 80 },
    });
    expect(parseMaxPrefixes('5000,restart,90%')?.ipv4).toEqual({ limit: 5000, action: 'restart', warningThreshold: 90 });
    expect(parseMaxPrefixes('0')).toBeUndefined();
    expect(() => parseMaxPrefixes('lots')).toThrow('--max-prefixes: expected LIMIT[,ACTION[,WARN%]]');
    expect(() => parseMaxPrefixes('10,drop')).toThrow('ACTION "drop" is not block, warn or restart');
  });
});
