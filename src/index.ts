/**
 * tsbgp — a BGP-4 speaker in TypeScript.
 *
 * Public API only; everything else is internal.
 *
 * ```ts
 * import { BgpSpeaker } from 'tsbgp';
 * const s = new BgpSpeaker({ asn: 65001, routerId: '192.0.2.1', listen: { port: 179 } });
 * s.addPeer({ address: '192.0.2.2', asn: 65002 });
 * await s.start();
 * s.originate('203.0.113.0/24', { communities: ['65001:100'] });
 * ```
 */
export { Address, Prefix, ParseError, type Family } from './net/index.js';
export type * from './wire/types.js';
export { BgpError } from './wire/errors.js';
export { describeNotification } from './wire/notification.js';
export { UnsupportedTransportError } from './session/transport.js';
export { BgpSpeaker } from './speaker.js';
export type * from './speaker/types.js';
export { PeerConfigError } from './speaker/peer-config.js';
export { RouteAttributeError } from './speaker/attributes.js';
export { PolicyError } from './policy/communities.js';
export { formatTrace } from './policy/engine.js';
export type * from './policy/definitions.js';
export type { Trace, PolicyTrace, StatementTrace, ConditionTrace } from './policy/types.js';
export { KernelFib, type KernelFibOptions, type KernelStatus } from './kernel/kernel-fib.js';
export { KernelRules, type KernelRule } from './kernel/rules.js';
export type { KernelRoute, NextHop, Refusal as KernelRefusal } from './kernel/types.js';
export type { KernelOptions, KernelStaticRoute, KernelRouteView, SpeakerKernelApi } from './speaker/kernel.js';
