/**
 * BFD for the speaker's peers (RFC 5882, BGP as a BFD client): one BFD
 * session per peer with `PeerOptions.bfd`, in the BFD worker thread. When a
 * session that was Up goes Down, the BGP session is taken down at once
 * (AutomaticStop, Cease 10 "BFD Down", RFC 9384) and its routes with it.
 *
 * The session starts when the peer is configured, not when BGP is
 * Established (as BIRD and FRR request it from the neighbour's
 * configuration): the agent has the worker running (`ready`) before it adds
 * the first peer with BFD, so the BFD session and the BGP connection start
 * together; BFD may still come Up after BGP (a second or two of 1 s packets
 * before Up, RFC 5880 §6.8.3), and is watched from the start.
 *
 * As FRR does by default, BFD never holds BGP back: a BGP session whose BFD
 * session never comes up runs on its hold timer; only an Up → Down transition
 * acts. A remote AdminDown (RFC 5882 §3.2) is not a failure and does nothing;
 * nor is the remote restarting its BFD session (fsm.ts `remoteRestarted`:
 * FRR's bfdd does when bgpd re-registers the session as BGP establishes).
 */
import { SLOW_TX_US, type BfdTimers, type BfdChange, type BfdDownRecord, type BfdSessionSpec, BfdService } from '../bfd/index.js';
import { PeerConfigError } from './peer-config-error.js';
import type { PeerBfdStatus, PeerOptions, SpeakerOptions } from './types.js';

const BFD_DEFAULTS = Object.freeze({ minRx: 300, minTx: 300, multiplier: 3 });
/** How long `ready()` waits at most for the BFD worker (it starts in ~0.5 s on a loaded 2-core machine). */
const READY_WAIT_MS = 10_000;

/** PeerOptions.bfd → the FSM's timers (µs); undefined when off. Throws naming the field. */
export function bfdTimers(o: PeerOptions['bfd'], where: string): BfdTimers | undefined {
  if (o === undefined || o === false) return undefined;
  if (o === true) return bfdTimers({}, where);
  if (typeof o !== 'object' || o === null)
    throw new PeerConfigError(`${where}: bfd must be false or { minRx, minTx, multiplier, passive }, got ${JSON.stringify(o)}`);
  const ms = (v: unknown, field: string, dflt: number): number => {
    const x = v ?? dflt;
    if (typeof x !== 'number' || !Number.isFinite(x) || x < 1 || x > 60_000)
      throw new PeerConfigError(`${where}: bfd.${field} must be 1..60000 ms, got ${JSON.stringify(v)}`);
    return Math.round(x * 1000);
  };
  const mult = o.multiplier ?? BFD_DEFAULTS.multiplier;
  if (!Number.isInteger(mult) || mult < 1 || mult > 255)
    throw new PeerConfigError(`${where}: bfd.multiplier must be 1..255, got ${JSON.stringify(o.multiplier)}`);
  if (o.passive !== undefined && typeof o.passive !== 'boolean') throw new PeerConfigError(`${where}: bfd.passive must be true or false`);
  return {
    desiredMinTx: ms(o.minTx, 'minTx', BFD_DEFAULTS.minTx),
    requiredMinRx: ms(o.minRx, 'minRx', BFD_DEFAULTS.minRx),
    detectMult: mult,
    passive: o.passive ?? false,
  };
}

/** The runtime's record of the last down (epoch ms) as status shows it (Dates). */
function lastDownOf(d: BfdDownRecord): NonNullable<PeerBfdStatus['lastDown']> {
  const { lastPacketAt, ...rest } = d;
  return { ...rest, at: new Date(d.at), upSince: new Date(d.upSince), ...(lastPacketAt !== undefined ? { lastPacketAt: new Date(lastPacketAt) } : {}) };
}

export interface SpeakerBfdHooks {
  /** A BFD session that was Up went Down (not by the remote's AdminDown): take the BGP session down. */
  onFailure(peerId: string, status: PeerBfdStatus): void;
  /** Every state change (status, events, metrics). */
  onStateChange(peerId: string, status: PeerBfdStatus, from: PeerBfdStatus['state']): void;
  log(level: 'info' | 'warning' | 'error', msg: string): void;
}

export class SpeakerBfd {
  private service: BfdService | undefined;
  private failure: string | undefined;
  private readonly specs = new Map<string, BfdSessionSpec>();
  private stopping = false;
  private readyWait: Promise<void> | undefined;
  /** Ends the wait of `ready()` when BFD stops. */
  private onStop: (() => void) | undefined;

  constructor(
    private readonly options: SpeakerOptions['bfd'],
    private readonly hooks: SpeakerBfdHooks,
  ) {}

  /** Adds, updates (new timers go through Poll/Final: no flap) or removes the peer's BFD session. */
  sync(peerId: string, o: PeerOptions): void {
    const timers = bfdTimers(o.bfd, `peer ${peerId}`);
    if (timers === undefined) return this.remove(peerId);
    const spec: BfdSessionSpec = {
      peer: peerId,
      timers,
      ...(o.localAddress !== undefined ? { local: o.localAddress } : {}),
      ...(this.options?.peerPort !== undefined ? { port: this.options.peerPort } : {}),
    };
    const old = this.specs.get(peerId);
    if (old && JSON.stringify(old) === JSON.stringify(spec)) return;
    this.specs.set(peerId, spec);
    const svc = this.ensure();
    if (old) svc.update(spec);
    else svc.add(spec);
  }

  /**
   * Starts the BFD service (worker thread, sockets) if it is not running yet; resolves once it
   * runs, or has failed (logged; sessions show Unavailable and BGP runs on its hold timer). Never rejects.
   */
  ready(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (this.readyWait === undefined) {
      // A stop while the worker starts ends the wait (the service's start would never settle).
      const stopped = new Promise<void>((resolve) => (this.onStop = resolve));
      // Peers wait for BFD, never indefinitely: a worker that neither starts nor fails within this
      // bound lets them go on (their BFD sessions start whenever it does).
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          this.hooks.log('warning', `BFD has not started within ${READY_WAIT_MS / 1000} s; peers start without waiting for it`);
          resolve();
        }, READY_WAIT_MS);
        timer.unref?.();
      });
      // ensure() logs a failure and status() shows it: the wait ends either way.
      this.readyWait = Promise.race([this.ensure().start(), stopped, bound])
        .catch(() => undefined)
        .finally(() => clearTimeout(timer));
    }
    return this.readyWait;
  }

  remove(peerId: string): void {
    if (!this.specs.delete(peerId)) return;
    this.service?.remove(peerId);
  }

  status(peerId: string): PeerBfdStatus | undefined {
    const spec = this.specs.get(peerId);
    if (!spec) return undefined;
    const s = this.service?.status(peerId);
    // A worker that died after starting is as unavailable as one that never started.
    this.failure ??= this.service?.failure;
    const desired = {
      minTxMs: spec.timers.desiredMinTx / 1000,
      minRxMs: spec.timers.requiredMinRx / 1000,
      multiplier: spec.timers.detectMult,
      passive: spec.timers.passive ?? false,
    };
    const ttl = this.service?.ttlCheck;
    const drops = this.service?.kernelDrops;
    const receivedTtl =
      ttl === undefined
        ? undefined
        : { checked: ttl.checked, ...(ttl.checked ? {} : { reason: ttl.reason }), ...(drops !== undefined ? { kernelDrops: drops } : {}) };
    if (this.failure !== undefined || !s) {
      return {
        state: this.failure !== undefined ? 'Unavailable' : 'Down',
        ...(this.failure !== undefined ? { error: this.failure } : {}),
        desired,
        txIntervalMs: Math.max(spec.timers.desiredMinTx, SLOW_TX_US) / 1000,
        detectionTimeMs: 0,
        lastDiag: { code: 0, text: 'No Diagnostic' },
      };
    }
    return {
      state: s.state,
      remoteState: s.remoteState,
      since: new Date(s.since),
      desired,
      txIntervalMs: s.txIntervalMs,
      detectionTimeMs: s.detectionTimeMs,
      remoteMultiplier: s.remoteMultiplier,
      lastDiag: s.lastDiag,
      remoteDiag: s.remoteDiag,
      ...(s.lastDown ? { lastDown: lastDownOf(s.lastDown) } : {}),
      localDiscriminator: s.localDiscr,
      remoteDiscriminator: s.remoteDiscr,
      counters: s.counters,
      ...(receivedTtl ? { receivedTtl } : {}),
    };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.onStop?.();
    this.specs.clear();
    await this.service?.stop();
  }

  private ensure(): BfdService {
    if (this.service) return this.service;
    const o = this.options;
    const svc = new BfdService({ ...(o ?? {}), log: (level, msg) => this.hooks.log(level, msg) });
    this.service = svc;
    svc.on('change', (c) => this.onChange(c));
    svc.start().then(
      () => this.hooks.log('info', `BFD running${o?.thread === false ? ' inline' : ' in its worker thread'}, listening on UDP port ${svc.ports.join(', ')}`),
      (e: Error) => {
        this.failure = e.message;
        this.hooks.log('error', `BFD is unavailable, sessions with bfd configured run on their hold timer only: ${e.message}`);
      },
    );
    return svc;
  }

  private onChange(c: BfdChange): void {
    if (c.from === undefined) return;
    const id = c.status.peer;
    if (!this.specs.has(id)) return;
    const st = this.status(id)!;
    this.hooks.onStateChange(id, st, c.from);
    if (c.from === 'Up' && c.status.state !== 'Up') {
      if (c.remoteAdminDown) {
        this.hooks.log('info', `peer ${id}: BFD: the remote went AdminDown; BGP session kept (RFC 5882 §3.2)`);
        return;
      }
      if (c.remoteRestarted) {
        this.hooks.log(
          'info',
          `peer ${id}: BFD: the remote restarted its BFD session ` +
            '(a new discriminator, or Down with diag 3 that we never signalled; FRR does this when its BGP session establishes), ' +
            'so the path is alive; BGP session kept while BFD comes back up',
        );
        return;
      }
      this.hooks.log('warning', `peer ${id}: BFD session down (${c.status.lastDiag.text}): taking the BGP session down`);
      this.hooks.onFailure(id, st);
    }
  }
}
