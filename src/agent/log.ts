/** Structured JSON logs, one object per line; levels as Calico's logSeverityScreen. */
const LEVELS = ['trace', 'debug', 'info', 'warning', 'error', 'fatal'] as const;
export type Level = (typeof LEVELS)[number];

/** Accepts Calico's spellings (Trace, Debug, Info, Warning, Error, Fatal) and `warn`. */
export function parseLevel(text: string): Level {
  const t = text.trim().toLowerCase();
  const level = t === 'warn' ? 'warning' : t;
  if (!(LEVELS as readonly string[]).includes(level)) throw new Error(`invalid log level ${JSON.stringify(text)} (expected one of ${LEVELS.join(', ')})`);
  return level as Level;
}

export interface Logger {
  level: Level;
  log(level: Level, msg: string, fields?: Record<string, unknown>): void;
  trace(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(opts: { level?: Level; write?: (line: string) => void; now?: () => Date } = {}): Logger {
  const write = opts.write ?? ((line: string) => process.stderr.write(line));
  const now = opts.now ?? (() => new Date());
  const logger: Logger = {
    level: opts.level ?? 'info',
    log(level, msg, fields) {
      if (LEVELS.indexOf(level) < LEVELS.indexOf(logger.level)) return;
      write(`${JSON.stringify({ time: now().toISOString(), level, msg, ...fields }, jsonSafe)}\n`);
    },
    trace: (m, f) => logger.log('trace', m, f),
    debug: (m, f) => logger.log('debug', m, f),
    info: (m, f) => logger.log('info', m, f),
    warn: (m, f) => logger.log('warning', m, f),
    error: (m, f) => logger.log('error', m, f),
  };
  return logger;
}

function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Error) return value.message;
  return value;
}

/** Sets the level and logs the change at info, before or after the switch so the line is seen whenever info was or becomes visible. */
export function changeLevel(log: Logger, level: Level, why: string): void {
  const from = log.level;
  if (level === from) return;
  const note = () => log.info(`log level ${level} (${why})`, { from });
  if (LEVELS.indexOf(level) < LEVELS.indexOf(from)) {
    log.level = level;
    note();
  } else {
    note();
    log.level = level;
  }
}

/**
 * "Log when changed": remembers, per topic, what was last seen, so a
 * condition that lasts (a refused peer, a plan error, an invalid object) is
 * logged when it appears or changes, not at every reconcile. Values are
 * compared as JSON.
 */
export class ChangeMemo {
  private readonly last = new Map<string, string>();
  private readonly seen = new Map<string, Set<string>>();

  /** True when `value` differs from the last one given for `topic` (the first one included). */
  changed(topic: string, value: unknown): boolean {
    const text = JSON.stringify(value);
    if (this.last.get(topic) === text) return false;
    this.last.set(topic, text);
    return true;
  }

  /** The items that were not in the list last given for `topic` (each compared as JSON). */
  added<T>(topic: string, items: readonly T[]): T[] {
    const before = this.seen.get(topic) ?? new Set<string>();
    const now = new Set<string>();
    const out: T[] = [];
    for (const i of items) {
      const text = JSON.stringify(i);
      now.add(text);
      if (!before.has(text)) out.push(i);
    }
    this.seen.set(topic, now);
    return out;
  }
}
