/**
 * The speaker layer's door: `BgpSpeaker`, its options, events and errors.
 * Other layers import only this file (scripts/layers.ts).
 */
export { BgpSpeaker } from './speaker.js';
export { RouteAttributeError } from './attributes.js';
export { type KernelOptions, type KernelRouteView, type KernelStaticRoute, type SpeakerKernelApi } from './kernel.js';
export { formatMaxPrefixLimit, parseMaxPrefixSpec } from './max-prefix.js';
export { PeerConfigError } from './peer-config-error.js';
export { toSessionConfig } from './peer-config.js';
export type * from './types.js';
