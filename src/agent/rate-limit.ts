/**
 * A token bucket: `burst` requests at once, refilled at `perSecond`. Pure
 * (time passed in), for the metrics endpoints: a client hammering /metrics
 * gets 429 instead of the agent's CPU.
 */
export class TokenBucket {
  private tokens: number;
  private last: number | undefined;

  constructor(
    readonly burst: number,
    readonly perSecond: number,
  ) {
    if (!(burst >= 1 && perSecond > 0)) throw new RangeError(`token bucket needs burst ≥ 1 and a positive rate, got ${burst}, ${perSecond}`);
    this.tokens = burst;
  }

  /** Takes a token at `nowMs`; false when none is left. */
  take(nowMs: number): boolean {
    if (this.last !== undefined) this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.last) / 1000) * this.perSecond);
    this.last = nowMs;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Seconds until the next token (for Retry-After). */
  retryAfter(): number {
    return Math.max(1, Math.ceil((1 - this.tokens) / this.perSecond));
  }
}
