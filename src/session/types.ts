import {
  type AddPathMode,
  type AfiSafi,
  type Capability,
  type NotificationMessage,
  type OpenMessage,
  type RouteRefreshMessage,
  type UpdateMessage,
  type Message,
  type BgpError,
  type CeaseSubcode,
  UNICAST,
} from '../wire/index.js';
import type { Negotiated } from './negotiate.js';

/** RFC 4271 §8.2.2 states. */
export type StateName = 'Idle' | 'Connect' | 'Active' | 'OpenSent' | 'OpenConfirm' | 'Established';

/** Per-connection timers of RFC 4271 §8 (IdleHold is the §8.1.1 damping timer). */
export type TimerName = 'ConnectRetry' | 'Hold' | 'Keepalive' | 'DelayOpen' | 'IdleHold';

/** Peer-level timers of graceful restart (RFC 4724). */
export type PeerTimerName = 'Restart' | 'StalePath' | 'LongLivedStale';

/** RFC 4271 §8.1 events, messages already decoded by the shell. */
export type FsmEvent =
  | { readonly type: 'ManualStart' }
  /** `notification` replaces the default Cease 6/2 (e.g. 6/3 de-configured, or 6/2 with an RFC 9003 message). */
  | { readonly type: 'ManualStop'; readonly notification?: NotificationMessage }
  | { readonly type: 'AutomaticStart' }
  | { readonly type: 'ManualStart_with_PassiveTcpEstablishment' }
  | { readonly type: 'AutomaticStart_with_PassiveTcpEstablishment' }
  /** Cease with `subcode` (default ADMINISTRATIVE_RESET) and `data`; `restartAfter` (s) replaces the next IdleHold delay (a max-prefix restart). */
  | { readonly type: 'AutomaticStop'; readonly subcode?: keyof typeof CeaseSubcode; readonly data?: Uint8Array; readonly restartAfter?: number }
  | { readonly type: 'ConnectRetryTimer_Expires' }
  /** RFC 9687: the shell saw no progress writing to the peer for the send hold time. */
  | { readonly type: 'SendHoldTimer_Expires' }
  | { readonly type: 'HoldTimer_Expires' }
  | { readonly type: 'KeepaliveTimer_Expires' }
  | { readonly type: 'DelayOpenTimer_Expires' }
  | { readonly type: 'IdleHoldTimer_Expires' }
  | { readonly type: 'TcpConnection_Valid' }
  | { readonly type: 'TcpConnection_Acknowledged' }
  | { readonly type: 'TcpConnectionConfirmed' }
  | { readonly type: 'TcpConnectionFails' }
  | { readonly type: 'BGPOpen'; readonly message: OpenMessage }
  | { readonly type: 'BGPHeaderErr'; readonly error: BgpError }
  | { readonly type: 'BGPOpenMsgErr'; readonly error: BgpError }
  | { readonly type: 'OpenCollisionDump' }
  | { readonly type: 'NotifMsgVerErr'; readonly message: NotificationMessage }
  | { readonly type: 'NotifMsg'; readonly message: NotificationMessage }
  | { readonly type: 'KeepAliveMsg' }
  | { readonly type: 'UpdateMsg'; readonly message: UpdateMessage }
  | { readonly type: 'UpdateMsgErr'; readonly error: BgpError }
  | { readonly type: 'RouteRefresh'; readonly message: RouteRefreshMessage };

export type FsmEventType = FsmEvent['type'];

/** Why a session (or an attempt) ended, for logs and the graceful-restart decision. */
export type DownReason =
  | { readonly kind: 'manualStop' }
  | { readonly kind: 'automaticStop' }
  | { readonly kind: 'holdTimerExpired' }
  | { readonly kind: 'sendHoldTimerExpired' }
  | { readonly kind: 'tcpFailed' }
  | { readonly kind: 'notificationReceived'; readonly code: number; readonly subcode: number }
  | { readonly kind: 'notificationSent'; readonly code: number; readonly subcode: number; readonly message: string }
  | { readonly kind: 'collision' }
  | { readonly kind: 'unexpected'; readonly event: FsmEventType };

/** What the FSM asks the shell to do. Plain data; the shell carries it out in order. */
export type FsmAction =
  | { readonly type: 'connect' }
  | { readonly type: 'disconnect' }
  | { readonly type: 'send'; readonly message: Message }
  | { readonly type: 'startTimer'; readonly timer: TimerName; readonly seconds: number }
  | { readonly type: 'stopTimer'; readonly timer: TimerName }
  | { readonly type: 'stateChange'; readonly from: StateName; readonly to: StateName }
  /** Both OPENs known: switch the codec contexts and framer limit. */
  | { readonly type: 'negotiated'; readonly negotiated: Negotiated }
  | { readonly type: 'sessionUp'; readonly negotiated: Negotiated }
  | { readonly type: 'sessionDown'; readonly reason: DownReason }
  /** An attempt that never reached Established ended. */
  | { readonly type: 'attemptFailed'; readonly reason: DownReason }
  | { readonly type: 'update'; readonly message: UpdateMessage }
  | { readonly type: 'routeRefresh'; readonly message: RouteRefreshMessage };

export interface IdleHoldConfig {
  /** First delay before an automatic restart, seconds. */
  readonly initial: number;
  /** Upper bound of the doubling backoff, seconds. */
  readonly max: number;
  /** A session up at least this long resets the backoff, seconds. */
  readonly stableAfter: number;
}

export interface GracefulRestartConfig {
  /** Seconds we ask peers to wait for us (0..4095). */
  readonly restartTime: number;
  /** Bound on waiting for End-of-RIB after the peer comes back, seconds. */
  readonly stalePathTime: number;
  /** Families whose forwarding state we keep across our own restart. */
  readonly forwardingPreserved: readonly AfiSafi[];
  /**
   * RFC 8538 N bit (default true): with a peer that sets it too, a session
   * ended by a NOTIFICATION other than Hard Reset keeps routes as stale like
   * a lost connection, and the Ceases that must end it for good are sent as
   * Hard Reset (src/session/graceful.ts).
   */
  readonly notification?: boolean;
}

/** RFC 9494 long-lived graceful restart; advertised only together with `gracefulRestart`. */
export interface LongLivedGracefulRestartConfig {
  /** Seconds a peer may keep our routes as LLGR-stale after its graceful-restart time (1..16777215). */
  readonly staleTime: number;
  /** Families whose forwarding state we keep across our own restart (F bit); default none. */
  readonly forwardingPreserved?: readonly AfiSafi[];
}

/** Static configuration of one peer as the session layer sees it. */
export interface SessionConfig {
  readonly localAs: number;
  /** Our BGP identifier, dotted quad. */
  readonly localId: string;
  /** The peer's AS, or 'any' to learn it from its OPEN. */
  readonly peerAs: number | 'any';
  /** Proposed hold time, seconds (0 or ≥ 3). */
  readonly holdTime: number;
  /** Keepalive interval; a third of the negotiated hold time when absent. */
  readonly keepaliveTime?: number;
  readonly connectRetryTime: number;
  /** RFC 4271 DelayOpen, seconds; 0 or absent disables it. */
  readonly delayOpenTime?: number;
  /** Never connect out; wait for the peer. */
  readonly passive: boolean;
  readonly idleHold: IdleHoldConfig;
  readonly families: readonly AfiSafi[];
  readonly routeRefresh: boolean;
  readonly enhancedRouteRefresh: boolean;
  readonly extendedMessage: boolean;
  readonly addPath: readonly { readonly afi: number; readonly safi: number; readonly mode: AddPathMode }[];
  /** Present to advertise graceful restart. */
  readonly gracefulRestart?: GracefulRestartConfig;
  /** Present (with `gracefulRestart`) to advertise long-lived graceful restart. */
  readonly longLivedGracefulRestart?: LongLivedGracefulRestartConfig;
  /** Extra capabilities to advertise verbatim. */
  readonly extraCapabilities?: readonly Capability[];
  /** Capabilities the peer must advertise; checked by kind (and family for multiprotocol). */
  readonly requiredCapabilities?: readonly Capability[];
}

export const DEFAULT_IDLE_HOLD: IdleHoldConfig = Object.freeze({ initial: 5, max: 120, stableAfter: 60 });

/** A config with RFC 4271 suggested defaults; override what you need. */
export function sessionConfig(base: Pick<SessionConfig, 'localAs' | 'localId' | 'peerAs'> & Partial<SessionConfig>): SessionConfig {
  return {
    holdTime: 90,
    connectRetryTime: 120,
    passive: false,
    idleHold: DEFAULT_IDLE_HOLD,
    families: [UNICAST[4]],
    routeRefresh: true,
    enhancedRouteRefresh: false,
    extendedMessage: false,
    addPath: [],
    ...base,
  };
}

export class SessionConfigError extends Error {
  override readonly name = 'SessionConfigError';
}

const DOTTED_QUAD = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Checks a config before any session uses it; the error names the field. */
export function validateSessionConfig(c: SessionConfig): SessionConfig {
  const bad = (field: string, why: string): never => {
    throw new SessionConfigError(`session config: ${field} ${why}`);
  };
  const asn = (n: number) => Number.isInteger(n) && n >= 1 && n <= 0xffffffff;
  if (!asn(c.localAs)) bad('localAs', `must be an AS number 1..4294967295, got ${c.localAs}`);
  if (c.peerAs !== 'any' && !asn(c.peerAs)) bad('peerAs', `must be an AS number 1..4294967295 or 'any', got ${c.peerAs}`);
  if (!DOTTED_QUAD.test(c.localId) || c.localId === '0.0.0.0')
    bad('localId', `must be a non-zero dotted-quad BGP identifier, got ${JSON.stringify(c.localId)}`);
  if (!Number.isInteger(c.holdTime) || c.holdTime < 0 || c.holdTime > 65535 || c.holdTime === 1 || c.holdTime === 2)
    bad('holdTime', `must be 0 or 3..65535 seconds, got ${c.holdTime}`);
  if (c.keepaliveTime !== undefined && (!Number.isInteger(c.keepaliveTime) || c.keepaliveTime < 1))
    bad('keepaliveTime', `must be a positive whole number of seconds, got ${c.keepaliveTime}`);
  if (!(c.connectRetryTime > 0)) bad('connectRetryTime', `must be positive, got ${c.connectRetryTime}`);
  if (c.delayOpenTime !== undefined && !(c.delayOpenTime >= 0)) bad('delayOpenTime', `must be 0 (off) or positive, got ${c.delayOpenTime}`);
  const ih = c.idleHold;
  if (!(ih.initial > 0) || !(ih.max >= ih.initial) || !(ih.stableAfter >= 0))
    bad('idleHold', `needs 0 < initial <= max and stableAfter >= 0, got ${JSON.stringify(ih)}`);
  if (c.families.length === 0) bad('families', 'must list at least one address family');
  const gr = c.gracefulRestart;
  if (gr && (!Number.isInteger(gr.restartTime) || gr.restartTime < 0 || gr.restartTime > 4095))
    bad('gracefulRestart.restartTime', `must be 0..4095 seconds, got ${gr.restartTime}`);
  if (gr && !(gr.stalePathTime > 0)) bad('gracefulRestart.stalePathTime', `must be positive, got ${gr.stalePathTime}`);
  const ll = c.longLivedGracefulRestart;
  if (ll && (!Number.isInteger(ll.staleTime) || ll.staleTime < 1 || ll.staleTime > 0xffffff))
    bad('longLivedGracefulRestart.staleTime', `must be 1..16777215 seconds, got ${ll.staleTime}`);
  if (ll && !gr) bad('longLivedGracefulRestart', 'needs gracefulRestart too (RFC 9494 §3 sends the two capabilities together)');
  return c;
}
