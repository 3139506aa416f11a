import type { Address, Prefix, PrefixKey } from '../net/index.js';

/**
 * Typed BGP messages. These are the contract between the codec and every
 * layer above it: plain, immutable-by-convention data, discriminated by `type`.
 * AS numbers are always 4-byte values in memory; the codec translates to and
 * from the 2-byte wire forms (AS_TRANS, AS4_PATH) per RFC 6793.
 */
export type Message = OpenMessage | UpdateMessage | NotificationMessage | KeepaliveMessage | RouteRefreshMessage;
export type MessageKind = Message['type'];

// ---------------------------------------------------------------- OPEN

export interface OpenMessage {
  readonly type: 'open';
  readonly version: number;
  /** The 2-byte "My AS" field as sent (AS_TRANS when the real AS needs 4 bytes). */
  readonly myAs: number;
  readonly holdTime: number;
  /** BGP identifier in dotted-quad form. */
  readonly bgpId: string;
  /** Optional parameters in wire order; capabilities (type 2) decoded. */
  readonly params: readonly OptionalParameter[];
  /** Encode with the RFC 9072 extended optional parameters length (255, 255, len16). */
  readonly extendedParams?: boolean;
}

export type OptionalParameter =
  { readonly type: 2; readonly capabilities: readonly Capability[] } | { readonly type: number; readonly value: Uint8Array; readonly capabilities?: undefined };

export interface AfiSafi {
  readonly afi: number;
  readonly safi: number;
}

export type AddPathMode = 'receive' | 'send' | 'both';

export type Capability =
  | { readonly kind: 'multiprotocol'; readonly afi: number; readonly safi: number }
  | { readonly kind: 'routeRefresh' }
  | { readonly kind: 'enhancedRouteRefresh' }
  | { readonly kind: 'extendedMessage' }
  | { readonly kind: 'fourOctetAs'; readonly asn: number }
  | {
      readonly kind: 'gracefulRestart';
      /** R bit: the sender has restarted. */
      readonly restarting: boolean;
      /** N bit (RFC 8538): graceful notification supported. */
      readonly notification: boolean;
      /** Seconds, 0..4095. */
      readonly restartTime: number;
      readonly families: readonly { readonly afi: number; readonly safi: number; readonly forwardingPreserved: boolean }[];
    }
  | {
      /** RFC 9494: per family, the F bit and the long-lived stale time (seconds, 24 bits). */
      readonly kind: 'longLivedGracefulRestart';
      readonly families: readonly { readonly afi: number; readonly safi: number; readonly forwardingPreserved: boolean; readonly staleTime: number }[];
    }
  | { readonly kind: 'addPath'; readonly families: readonly { readonly afi: number; readonly safi: number; readonly mode: AddPathMode }[] }
  | { readonly kind: 'extendedNextHop'; readonly entries: readonly { readonly afi: number; readonly safi: number; readonly nextHopAfi: number }[] }
  | { readonly kind: 'fqdn'; readonly hostname: string; readonly domain: string }
  /** Anything else (including malformed known ones we chose to keep), as raw bytes. */
  | { readonly kind: 'unknown'; readonly code: number; readonly value: Uint8Array };

// ---------------------------------------------------------------- UPDATE

export interface AsPathSegment {
  /** 1 AS_SET, 2 AS_SEQUENCE, 3 AS_CONFED_SEQUENCE, 4 AS_CONFED_SET. */
  readonly type: 1 | 2 | 3 | 4;
  readonly asns: readonly number[];
}

export interface Aggregator {
  readonly asn: number;
  readonly address: Address;
}

export interface LargeCommunity {
  readonly global: number;
  readonly local1: number;
  readonly local2: number;
}

/** An attribute the codec does not interpret, kept as bytes (flags as received, Partial set when passed on). */
export interface RawAttribute {
  readonly flags: number;
  readonly code: number;
  readonly value: Uint8Array;
}

export interface MpReach {
  readonly afi: number;
  readonly safi: number;
  /** One next hop, or IPv6 global + link-local. Empty for families the codec does not interpret. */
  readonly nextHops: readonly Address[];
  /** Unicast NLRI (IPv4 or IPv6). */
  readonly nlri: readonly Prefix[];
  /** ADD-PATH path identifiers, parallel to `nlri`, when negotiated for this family. */
  readonly pathIds?: readonly number[];
  /** For AFI/SAFI the codec does not interpret: next hop and NLRI bytes as received. */
  readonly raw?: Uint8Array;
  /** Set by the decoder only: `nlri` as prefix keys (see `UpdateMessage.nlriKeys`). */
  readonly keys?: readonly PrefixKey[];
}

export interface MpUnreach {
  readonly afi: number;
  readonly safi: number;
  readonly withdrawn: readonly Prefix[];
  readonly pathIds?: readonly number[];
  readonly raw?: Uint8Array;
  /** Set by the decoder only: `withdrawn` as prefix keys (see `UpdateMessage.nlriKeys`). */
  readonly keys?: readonly PrefixKey[];
}

/** Path attributes of one UPDATE. Absent fields were not present on the wire. */
export interface PathAttributes {
  /** 0 IGP, 1 EGP, 2 INCOMPLETE. */
  readonly origin?: 0 | 1 | 2;
  readonly asPath?: readonly AsPathSegment[];
  readonly nextHop?: Address;
  readonly med?: number;
  readonly localPref?: number;
  readonly atomicAggregate?: boolean;
  readonly aggregator?: Aggregator;
  /** RFC 1997 communities as 32-bit values (high 16 bits the AS). */
  readonly communities?: readonly number[];
  readonly originatorId?: Address;
  readonly clusterList?: readonly Address[];
  readonly mpReach?: MpReach;
  readonly mpUnreach?: MpUnreach;
  /** RFC 4360 extended communities as 64-bit values. */
  readonly extendedCommunities?: readonly bigint[];
  readonly largeCommunities?: readonly LargeCommunity[];
  /** Attributes without a decoder here, in wire order. */
  readonly unknown?: readonly RawAttribute[];
}

/** What RFC 7606 (or RFC 4271 where 7606 is silent) made of a flawed attribute. */
export interface AttributeIssue {
  readonly code: number;
  readonly action: 'attribute-discard' | 'treat-as-withdraw';
  readonly reason: string;
}

export interface UpdateMessage {
  readonly type: 'update';
  /** IPv4 unicast withdrawals in the classic field. */
  readonly withdrawn: readonly Prefix[];
  readonly withdrawnPathIds?: readonly number[];
  readonly attributes: PathAttributes;
  /** IPv4 unicast NLRI in the classic field. */
  readonly nlri: readonly Prefix[];
  readonly nlriPathIds?: readonly number[];
  /**
   * Set by the decoder only: problems handled per RFC 7606. Under
   * treat-as-withdraw the decoder has already moved every NLRI (classic and
   * MP_REACH) into the withdrawn lists and cleared `attributes`.
   */
  readonly issues?: readonly AttributeIssue[];
  /**
   * Set by the decoder only: `withdrawn` and `nlri` as prefix keys
   * (src/net/prefix-key.ts), parallel to them. A decoded UPDATE holds its
   * prefixes in this form and builds the Prefix lists on first read
   * (src/wire/received.ts); the RIB reads the keys, so receiving a route
   * builds no Prefix. Absent on a message built by hand: use the lists.
   */
  readonly withdrawnKeys?: readonly PrefixKey[];
  readonly nlriKeys?: readonly PrefixKey[];
}

// ---------------------------------------------------------------- others

export interface NotificationMessage {
  readonly type: 'notification';
  readonly code: number;
  readonly subcode: number;
  readonly data: Uint8Array;
}

export interface KeepaliveMessage {
  readonly type: 'keepalive';
}

export interface RouteRefreshMessage {
  readonly type: 'routeRefresh';
  readonly afi: number;
  readonly safi: number;
  /** RFC 7313: 0 normal request, 1 BoRR, 2 EoRR. */
  readonly subtype: number;
}
