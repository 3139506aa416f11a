/**
 * The wire layer: framing, every BGP message, capabilities, and the UPDATE
 * packer. Pure functions over bytes; the one stateful piece is the Framer's
 * reassembly buffer.
 */
export type * from './types.js';
export * from './constants.js';
export { BgpError } from './errors.js';
export { DEFAULT_CONTEXT, LEGACY_CONTEXT, maxMessageSize, type CodecContext } from './context.js';
export { Framer, badLengthError, type FrameHandler } from './framer.js';
export { frameMessage, writeHeader } from './header.js';
export { decodeMessage, encodeMessage } from './message.js';
export { decodeOpen, encodeOpenBody, buildOpen, openAsn, capabilitiesOf, type OpenOptions } from './open.js';
export { decodeCapabilities, decodeCapability, encodeCapability, encodeCapabilities } from './capabilities.js';
export { decodeNotification, encodeNotificationBody, describeNotification, shutdownNotification, shutdownCommunication } from './notification.js';
export { decodeRouteRefresh, encodeRouteRefreshBody } from './route-refresh.js';
export { decodeUpdate, encodeUpdateBody } from './update.js';
export { packUpdates, packWithdrawals, PackArena, ARENA_CHUNK } from './packer.js';
export {
  communityPair,
  decimal,
  formatCommunity,
  formatExtendedCommunity,
  formatLargeCommunity,
  isNonTransitive,
  linkBandwidth,
  linkBandwidthOf,
  parseCommunity,
  parseCommunityLiteral,
  parseExtendedCommunity,
  parseLargeCommunity,
} from './communities.js';
export { UNICAST, familyName, familyOfAfi, unicastFamily } from './families.js';
export { Notify } from './notification.js';
export { endOfRib, isEndOfRib } from './update.js';
