/**
 * Max-prefix limits (PeerOptions.maxPrefixes; RFC 4486 Cease 6/1): per
 * family, a limit on the routes a peer may have in our Adj-RIB-In (counted
 * before import policy, as BIRD's `receive limit`), a warning threshold and
 * an action. Pure: the speaker feeds counts after each UPDATE (O(1) each,
 * the RIB keeps them) and carries out what comes back. The 'block' action
 * itself is enforced by the RIB (`PeerConfig.maxRoutes`), which refuses new
 * prefixes beyond the limit and counts them.
 */
import type { FamilyName, MaxPrefixLimit, PeerOptions } from './types.js';

export type LimitState = 'ok' | 'warning' | 'exceeded';

export type LimitAction =
  | { readonly type: 'log'; readonly level: 'info' | 'warning' | 'error'; readonly message: string }
  /** Cease 6/1 with `data`, reconnect after `restartAfter` seconds. */
  | { readonly type: 'teardown'; readonly family: FamilyName; readonly data: Uint8Array; readonly restartAfter: number; readonly message: string }
  /** Send the peer a ROUTE-REFRESH (RFC 2918) for `family`: what `block` refused may now fit. */
  | { readonly type: 'refresh'; readonly family: FamilyName; readonly message: string };

const FAMILIES: readonly FamilyName[] = ['ipv4', 'ipv6'];
const AFI: Record<FamilyName, number> = { ipv4: 1, ipv6: 2 };
const MAX_LIMIT = 0x7fffffff;

const DEFAULT_WARNING_THRESHOLD = 80;
const DEFAULT_RESTART_AFTER = 60;

/** RFC 4486 §4: the data of Cease 6/1 — AFI (2 bytes), SAFI (1), the upper bound (4). */
export function maxPrefixData(family: FamilyName, limit: number): Uint8Array {
  const d = new Uint8Array(7);
  const v = new DataView(d.buffer);
  v.setUint16(0, AFI[family]);
  v.setUint8(2, 1);
  v.setUint32(3, limit);
  return d;
}

/** Checks `maxPrefixes`; throws naming the field. */
export function validateMaxPrefixes(m: PeerOptions['maxPrefixes'], where: string): void {
  if (m === undefined) return;
  if (typeof m !== 'object' || m === null) throw new Error(`${where}: maxPrefixes must be an object with ipv4 and/or ipv6`);
  for (const [fam, l] of Object.entries(m)) {
    const at = `${where}: maxPrefixes.${fam}`;
    if (!FAMILIES.includes(fam as FamilyName)) throw new Error(`${where}: maxPrefixes: unknown family ${JSON.stringify(fam)} (known: ipv4, ipv6)`);
    if (l === undefined) continue;
    const x = l as MaxPrefixLimit;
    if (!Number.isInteger(x.limit) || x.limit < 1 || x.limit > MAX_LIMIT)
      throw new Error(`${at}.limit must be an integer 1..${MAX_LIMIT}, got ${String(x.limit)}`);
    if (x.action !== undefined && !['warn', 'block', 'restart'].includes(x.action))
      throw new Error(`${at}.action must be warn, block or restart, got ${JSON.stringify(x.action)}`);
    if (x.warningThreshold !== undefined && !(Number.isFinite(x.warningThreshold) && x.warningThreshold >= 1 && x.warningThreshold <= 100))
      throw new Error(`${at}.warningThreshold must be a percentage 1..100, got ${String(x.warningThreshold)}`);
    if (x.restartAfter !== undefined && !(Number.isFinite(x.restartAfter) && x.restartAfter >= 1 && x.restartAfter <= 86400))
      throw new Error(`${at}.restartAfter must be 1..86400 seconds, got ${String(x.restartAfter)}`);
  }
}

/**
 * `LIMIT[,ACTION[,WARN%]]`, as the agent's `--max-prefixes` flag and the
 * BGPPeer annotation `tsbgp.io/max-prefixes` write it: LIMIT routes per
 * family (0: no limit, returned as null), ACTION block (default), warn or
 * restart, WARN% the warning threshold (default 80). Throws an Error saying
 * what is wrong (the caller adds where).
 */
export function parseMaxPrefixSpec(text: string): MaxPrefixLimit | null {
  const fail = (why: string): never => {
    throw new Error(`expected LIMIT[,ACTION[,WARN%]] (e.g. 20000 or 50000,restart or 20000,block,90), got ${JSON.stringify(text)}: ${why}`);
  };
  const [limitText, actionText, warnText, ...rest] = text.split(',').map((s) => s.trim());
  if (rest.length > 0) fail('too many parts');
  if (!/^\d+$/.test(limitText ?? '')) fail(`LIMIT ${JSON.stringify(limitText)} is not a whole number`);
  const limit = Number(limitText);
  if (limit === 0) {
    if (actionText !== undefined || warnText !== undefined) fail('LIMIT 0 (no limit) takes no ACTION or WARN%');
    return null;
  }
  if (limit > MAX_LIMIT) fail(`LIMIT must be at most ${MAX_LIMIT}`);
  const action = (actionText === undefined || actionText === '' ? 'block' : actionText) as NonNullable<MaxPrefixLimit['action']>;
  if (!['block', 'warn', 'restart'].includes(action)) fail(`ACTION ${JSON.stringify(actionText)} is not block, warn or restart`);
  let warningThreshold = DEFAULT_WARNING_THRESHOLD;
  if (warnText !== undefined) {
    const w = warnText.replace(/%$/, '');
    if (!/^\d+$/.test(w) || Number(w) < 1 || Number(w) > 100) fail(`WARN% ${JSON.stringify(warnText)} is not a percentage 1-100`);
    warningThreshold = Number(w);
  }
  return { limit, action, warningThreshold };
}

/** `20000,block,80%`, or `none`: a limit as parseMaxPrefixSpec reads it. */
export function formatMaxPrefixLimit(l: MaxPrefixLimit | null | undefined): string {
  if (!l) return 'none';
  return `${l.limit},${l.action ?? 'restart'},${l.warningThreshold ?? DEFAULT_WARNING_THRESHOLD}%`;
}

/** The RIB's hard caps: the limits whose action is 'block'. */
export function blockCaps(m: PeerOptions['maxPrefixes']): Partial<Record<4 | 6, number>> | undefined {
  if (m === undefined) return undefined;
  const out: Partial<Record<4 | 6, number>> = {};
  if (m.ipv4?.action === 'block') out[4] = m.ipv4.limit;
  if (m.ipv6?.action === 'block') out[6] = m.ipv6.limit;
  return out[4] === undefined && out[6] === undefined ? undefined : out;
}

/** Where one family stands against its limit. */
export function limitState(l: MaxPrefixLimit, received: number, refused: number): LimitState {
  if (refused > 0 || received > l.limit) return 'exceeded';
  return received >= warningAt(l) ? 'warning' : 'ok';
}

function warningAt(l: MaxPrefixLimit): number {
  return Math.ceil((l.limit * (l.warningThreshold ?? DEFAULT_WARNING_THRESHOLD)) / 100);
}

const FRESH_SAID: Readonly<Record<FamilyName, LimitState>> = Object.freeze({ ipv4: 'ok', ipv6: 'ok' });
const FRESH_ASKED: Readonly<Record<FamilyName, number>> = Object.freeze({ ipv4: 0, ipv6: 0 });
const FRESH_STUCK: Readonly<Record<FamilyName, boolean>> = Object.freeze({ ipv4: false, ipv6: false });

/**
 * One peer's limit bookkeeping: what was already said, so each crossing is
 * logged once (and again only after the count fell back under the warning
 * threshold), not at every UPDATE.
 */
export class PrefixLimits {
  // Each record starts as a shared frozen one and is copied on its first change (rare: a limit crossed), so an
  // idle peer holds none of its own.
  private said: Readonly<Record<FamilyName, LimitState>> = FRESH_SAID;
  /** The RIB's refused count when we last asked the peer again (route refresh): what came after is outstanding. */
  private asked: Readonly<Record<FamilyName, number>> = FRESH_ASKED;
  /** Said (once per session) that refused routes stay refused: the peer has no route refresh. */
  private saidStuck: Readonly<Record<FamilyName, boolean>> = FRESH_STUCK;

  constructor(
    private limits: PeerOptions['maxPrefixes'],
    private readonly peer: string,
  ) {}

  configure(limits: PeerOptions['maxPrefixes']): void {
    this.limits = limits;
  }

  limitOf(family: FamilyName): MaxPrefixLimit | undefined {
    return this.limits?.[family];
  }

  /** A new session: forget what was said about the last one (the RIB's refused counts start again at 0). */
  reset(): void {
    this.said = FRESH_SAID;
    this.asked = FRESH_ASKED;
    this.saidStuck = FRESH_STUCK;
  }

  /** Routes refused by `block` and not asked for again since (`refused`: the RIB's count for this session). */
  outstanding(family: FamilyName, refused: number): number {
    return Math.max(0, refused - this.asked[family]);
  }

  /**
   * After routes of `family` changed: the logs, teardowns and route
   * refreshes due. `refused` is the RIB's count of routes refused by `block`
   * this session; `canRefresh`, whether the peer negotiated route refresh.
   *
   * Refused routes are asked for again (ROUTE-REFRESH, as a router would)
   * once the count falls under the warning threshold, not merely under the
   * limit: a table hovering at the limit would otherwise make the peer
   * resend everything at each withdrawal. Without route refresh they stay
   * refused until the session restarts, and the log says so once.
   */
  check(family: FamilyName, received: number, refused: number, canRefresh = false): LimitAction[] {
    const l = this.limits?.[family];
    if (l === undefined) return [];
    const out = this.recheck(l, family, received, refused, canRefresh);
    return [...out, ...this.crossings(l, family, received, this.outstanding(family, refused))];
  }

  private recheck(l: MaxPrefixLimit, family: FamilyName, received: number, refused: number, canRefresh: boolean): LimitAction[] {
    const waiting = this.outstanding(family, refused);
    if ((l.action ?? 'restart') !== 'block' || waiting === 0 || received >= warningAt(l)) return [];
    const fam = family === 'ipv4' ? 'IPv4' : 'IPv6';
    if (canRefresh) {
      this.asked = { ...this.asked, [family]: refused };
      return [
        {
          type: 'refresh',
          family,
          message:
            `peer ${this.peer}: ${fam} prefixes down to ${received} of limit ` +
            `${l.limit}: asking the peer for its routes again (ROUTE-REFRESH) to take the ${waiting} refused`,
        },
      ];
    }
    if (this.saidStuck[family]) return [];
    this.saidStuck = { ...this.saidStuck, [family]: true };
    return [
      {
        type: 'log',
        level: 'warning',
        message:
          `peer ${this.peer}: ${fam} prefixes down to ${received} of limit ` +
          `${l.limit}, but the peer does not support route refresh: the ` +
          `${waiting} refused routes stay refused until the peer announces them again or the session restarts`,
      },
    ];
  }

  private crossings(l: MaxPrefixLimit, family: FamilyName, received: number, refused: number): LimitAction[] {
    const state = limitState(l, received, refused);
    const was = this.said[family];
    if (state === was) return [];
    this.said = { ...this.said, [family]: state };
    const fam = family === 'ipv4' ? 'IPv4' : 'IPv6';
    const action = l.action ?? 'restart';
    if (state === 'ok')
      return was === 'exceeded' || was === 'warning'
        ? [
            {
              type: 'log',
              level: 'info',
              message: `peer ${this.peer}: ${fam} prefixes back under the warning threshold (${received} of limit ${l.limit})`,
            },
          ]
        : [];
    if (state === 'warning') {
      if (was === 'exceeded') return [];
      return [
        {
          type: 'log',
          level: 'warning',
          message:
            `peer ${this.peer}: ${fam} prefixes at ${received} of limit ${l.limit} (warning threshold ` +
            `${l.warningThreshold ?? DEFAULT_WARNING_THRESHOLD}%)`,
        },
      ];
    }
    switch (action) {
      case 'warn':
        return [
          {
            type: 'log',
            level: 'warning',
            message: `peer ${this.peer}: ${fam} prefixes ${received} exceed the limit ${l.limit} (action warn: all kept)`,
          },
        ];
      case 'block':
        return [
          {
            type: 'log',
            level: 'error',
            message:
              `peer ${this.peer}: ${fam} prefix limit ${l.limit} reached: refusing new ` +
              `${fam} routes from this peer (action block; refused so far shown in status and metrics); the session and our advertisements stay up`,
          },
        ];
      case 'restart': {
        const restartAfter = l.restartAfter ?? DEFAULT_RESTART_AFTER;
        const message =
          `peer ${this.peer}: ${fam} prefixes ${received} exceed the limit ` + `${l.limit}: closing the session (Cease 6/1), reconnecting in ${restartAfter} s`;
        return [
          { type: 'log', level: 'error', message },
          { type: 'teardown', family, data: maxPrefixData(family, l.limit), restartAfter, message },
        ];
      }
    }
  }
}
