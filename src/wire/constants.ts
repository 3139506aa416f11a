/** Wire constants of RFC 4271 and its extensions. Plain objects, not enums, so they erase cleanly. */

export const HEADER_LENGTH = 19;
export const MAX_MESSAGE = 4096;
/** RFC 8654 extended messages. */
export const MAX_EXTENDED_MESSAGE = 65535;
export const BGP_VERSION = 4;
/** RFC 6793: the 2-byte stand-in for a 4-byte AS number. */
export const AS_TRANS = 23456;

export const MessageType = {
  OPEN: 1,
  UPDATE: 2,
  NOTIFICATION: 3,
  KEEPALIVE: 4,
  ROUTE_REFRESH: 5,
} as const;

export const Afi = { IPV4: 1, IPV6: 2 } as const;
export const Safi = { UNICAST: 1 } as const;

export const AttrType = {
  ORIGIN: 1,
  AS_PATH: 2,
  NEXT_HOP: 3,
  MULTI_EXIT_DISC: 4,
  LOCAL_PREF: 5,
  ATOMIC_AGGREGATE: 6,
  AGGREGATOR: 7,
  COMMUNITIES: 8,
  ORIGINATOR_ID: 9,
  CLUSTER_LIST: 10,
  MP_REACH_NLRI: 14,
  MP_UNREACH_NLRI: 15,
  EXTENDED_COMMUNITIES: 16,
  AS4_PATH: 17,
  AS4_AGGREGATOR: 18,
  LARGE_COMMUNITIES: 32,
} as const;

export const AttrFlag = {
  OPTIONAL: 0x80,
  TRANSITIVE: 0x40,
  PARTIAL: 0x20,
  EXTENDED_LENGTH: 0x10,
} as const;

export const CapabilityCode = {
  MULTIPROTOCOL: 1,
  ROUTE_REFRESH: 2,
  EXTENDED_NEXT_HOP: 5,
  EXTENDED_MESSAGE: 6,
  GRACEFUL_RESTART: 64,
  FOUR_OCTET_AS: 65,
  ADD_PATH: 69,
  ENHANCED_ROUTE_REFRESH: 70,
  LONG_LIVED_GRACEFUL_RESTART: 71,
  FQDN: 73,
} as const;

/** RFC 1997 and IANA well-known communities. */
export const WellKnownCommunity = {
  GRACEFUL_SHUTDOWN: 0xffff0000,
  ACCEPT_OWN: 0xffff0001,
  LLGR_STALE: 0xffff0006,
  NO_LLGR: 0xffff0007,
  BLACKHOLE: 0xffff029a,
  NO_EXPORT: 0xffffff01,
  NO_ADVERTISE: 0xffffff02,
  NO_EXPORT_SUBCONFED: 0xffffff03,
  NOPEER: 0xffffff04,
} as const;

/** NOTIFICATION error codes (RFC 4271 §4.5, RFC 7313). */
export const ErrorCode = {
  MESSAGE_HEADER: 1,
  OPEN_MESSAGE: 2,
  UPDATE_MESSAGE: 3,
  HOLD_TIMER_EXPIRED: 4,
  FSM: 5,
  CEASE: 6,
  ROUTE_REFRESH: 7,
  /** RFC 9687. */
  SEND_HOLD_TIMER_EXPIRED: 8,
} as const;

export const HeaderSubcode = { CONNECTION_NOT_SYNCHRONIZED: 1, BAD_MESSAGE_LENGTH: 2, BAD_MESSAGE_TYPE: 3 } as const;

export const OpenSubcode = {
  /** RFC 4271 §6.2: a malformed OPEN no other subcode names (e.g. optional parameter lengths). */
  UNSPECIFIC: 0,
  UNSUPPORTED_VERSION: 1,
  BAD_PEER_AS: 2,
  BAD_BGP_IDENTIFIER: 3,
  UNSUPPORTED_OPTIONAL_PARAMETER: 4,
  UNACCEPTABLE_HOLD_TIME: 6,
  UNSUPPORTED_CAPABILITY: 7,
  ROLE_MISMATCH: 11,
} as const;

export const UpdateSubcode = {
  MALFORMED_ATTRIBUTE_LIST: 1,
  UNRECOGNIZED_WELL_KNOWN_ATTRIBUTE: 2,
  MISSING_WELL_KNOWN_ATTRIBUTE: 3,
  ATTRIBUTE_FLAGS_ERROR: 4,
  ATTRIBUTE_LENGTH_ERROR: 5,
  INVALID_ORIGIN_ATTRIBUTE: 6,
  INVALID_NEXT_HOP_ATTRIBUTE: 8,
  OPTIONAL_ATTRIBUTE_ERROR: 9,
  INVALID_NETWORK_FIELD: 10,
  MALFORMED_AS_PATH: 11,
} as const;

export const FsmSubcode = {
  UNSPECIFIED: 0,
  UNEXPECTED_IN_OPENSENT: 1,
  UNEXPECTED_IN_OPENCONFIRM: 2,
  UNEXPECTED_IN_ESTABLISHED: 3,
} as const;

/** RFC 4486 Cease subcodes. */
export const CeaseSubcode = {
  MAXIMUM_PREFIXES: 1,
  ADMINISTRATIVE_SHUTDOWN: 2,
  PEER_DECONFIGURED: 3,
  ADMINISTRATIVE_RESET: 4,
  CONNECTION_REJECTED: 5,
  OTHER_CONFIGURATION_CHANGE: 6,
  CONNECTION_COLLISION_RESOLUTION: 7,
  OUT_OF_RESOURCES: 8,
  HARD_RESET: 9,
  BFD_DOWN: 10,
} as const;

export const RouteRefreshSubcode = { INVALID_MESSAGE_LENGTH: 1 } as const;

/** Hold Timer Expired (and Send Hold Timer Expired) have no subcodes: always 0. */
export const HoldTimerSubcode = { UNSPECIFIC: 0 } as const;

/** RFC 7313 ROUTE-REFRESH message subtypes. */
export const RefreshSubtype = { NORMAL: 0, BORR: 1, EORR: 2 } as const;
