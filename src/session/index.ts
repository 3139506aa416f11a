/**
 * The session layer's door: the RFC 4271 FSM and its socket shell, as the
 * speaker and the BFD shell use them. Other layers import only this file
 * (scripts/layers.ts).
 */
export { realScheduler, type Scheduler } from './clock.js';
export { joinUpdates, type UpdateRun } from './connection.js';
export { Listener, canonicalRemote } from './listener.js';
export { type Negotiated } from './negotiate.js';
export { Peer, describeReason, type PeerHooks } from './peer.js';
export { UnsupportedTransportError, assertTransportSupported, transportOptionsProblem } from './transport.js';
export { DEFAULT_IDLE_HOLD, sessionConfig, validateSessionConfig, type DownReason, type SessionConfig, type StateName } from './types.js';
export { hardResetInner } from './graceful.js';
