/**
 * Log lines for refused inbound connections, throttled: the first few of
 * each window are logged as they happen, the rest counted and summarised in
 * one line when the window ends (how many, from how many addresses, the
 * busiest ones). A scan or a flood of connections from unconfigured
 * addresses costs a few lines a minute, not one line each.
 */
export interface RefusalLogOptions {
  /** Lines logged one by one per window (default 5). */
  readonly perWindow?: number;
  /** Window length, ms (default 60 s). */
  readonly windowMs?: number;
  readonly now?: () => number;
  readonly setTimeout?: (fn: () => void, ms: number) => unknown;
  readonly clearTimeout?: (h: unknown) => void;
}

/** Distinct addresses counted per window; beyond that they are counted together. */
const MAX_ADDRESSES = 1000;

export class RefusalLog {
  private readonly perWindow: number;
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly setTimer: (fn: () => void, ms: number) => unknown;
  private readonly clearTimer: (h: unknown) => void;
  private windowStart: number | undefined;
  private shown = 0;
  private suppressed = 0;
  private readonly from = new Map<string, number>();
  private timer: unknown;

  constructor(
    private readonly log: (line: string) => void,
    o: RefusalLogOptions = {},
  ) {
    this.perWindow = o.perWindow ?? 5;
    this.windowMs = o.windowMs ?? 60_000;
    this.now = o.now ?? Date.now;
    this.setTimer =
      o.setTimeout ??
      ((fn, ms) => {
        const t = setTimeout(fn, ms);
        t.unref?.();
        return t;
      });
    this.clearTimer = o.clearTimeout ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));
  }

  /** A connection from `remote` was refused: `line` says why. */
  refused(remote: string, line: string): void {
    const now = this.now();
    if (this.windowStart === undefined || now - this.windowStart >= this.windowMs) {
      this.flush();
      this.windowStart = now;
    }
    if (this.shown < this.perWindow) {
      this.shown++;
      this.log(this.shown === this.perWindow ? `${line} (further refusals in the next ${Math.round(this.windowMs / 1000)} s are summarised)` : line);
      return;
    }
    this.suppressed++;
    const key = this.from.has(remote) || this.from.size < MAX_ADDRESSES ? remote : 'other addresses';
    this.from.set(key, (this.from.get(key) ?? 0) + 1);
    this.timer ??= this.setTimer(
      () => {
        this.timer = undefined;
        this.flush();
      },
      Math.max(0, this.windowStart + this.windowMs - now),
    );
  }

  /** Logs the summary of what was suppressed, and starts a new window. */
  flush(): void {
    if (this.timer !== undefined) this.clearTimer(this.timer);
    this.timer = undefined;
    if (this.suppressed > 0) {
      const top = [...this.from]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([a, n]) => `${a} ×${n}`)
        .join(', ');
      const secs = Math.round((this.now() - (this.windowStart ?? this.now())) / 1000);
      this.log(`${this.suppressed} more connection(s) refused in the last ${secs} s from ${this.from.size} address(es) not logged one by one: ${top}`);
    }
    this.windowStart = undefined;
    this.shown = 0;
    this.suppressed = 0;
    this.from.clear();
  }
}
