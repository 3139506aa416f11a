/** Messages between the BFD worker thread and the main thread (structured-clone data only). */
import type { BfdChange, BfdSessionSpec, BfdSessionStatus } from './runtime.js';
import type { TtlCheckStatus } from './udp.js';

/** What the worker needs to open its sockets (UdpOptions without functions). */
export interface BfdWorkerData {
  readonly port?: number;
  readonly peerPort?: number;
  readonly listen?: readonly string[];
}

export type ToWorker =
  | { readonly op: 'add'; readonly spec: BfdSessionSpec }
  | { readonly op: 'update'; readonly spec: BfdSessionSpec }
  | { readonly op: 'remove'; readonly peer: string }
  | { readonly op: 'stop' };

export type FromWorker =
  | { readonly type: 'ready'; readonly ports: number[]; readonly ttl: TtlCheckStatus }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'change'; readonly change: BfdChange }
  /** Counters of every session, pushed once a second when they moved. */
  | { readonly type: 'stats'; readonly sessions: BfdSessionStatus[]; readonly discarded: number; readonly lastDiscard?: string; readonly kernelDrops?: number }
  | { readonly type: 'log'; readonly level: 'info' | 'warning' | 'error'; readonly msg: string }
  | { readonly type: 'stopped' };
