import { prefixFromKey, type Address, type Prefix, type PrefixKey } from '../net/index.js';
import type { AttributeIssue, MpReach, MpUnreach, PathAttributes, UpdateMessage } from './types.js';

/**
 * What the decoder returns for an UPDATE: its prefix lists held as prefix
 * keys (src/net/prefix-key.ts, what nlri.ts decodes into and the RIB
 * stores), and `withdrawn` / `nlri` (MP_REACH's `nlri`, MP_UNREACH's
 * `withdrawn`) built as Prefix objects on first read, then kept. Receiving a
 * table through the RIB (which reads `nlriKeys` and friends) builds no
 * Prefix per route; a reader of the lists (a listener, a test) gets the same
 * values as before.
 *
 * The lists are getters on the class (an own accessor per object costs a
 * runtime call per message), so a structural comparison or spread of one of
 * these sees no `withdrawn` / `nlri`: compare `plainUpdate(m)` instead, and
 * `JSON.stringify` goes through `toJSON`.
 */

const NO_KEYS: readonly PrefixKey[] = Object.freeze([]);

function prefixes(keys: readonly PrefixKey[]): readonly Prefix[] {
  const out: Prefix[] = new Array(keys.length);
  for (let i = 0; i < keys.length; i++) out[i] = prefixFromKey(keys[i]);
  return out;
}

export class ReceivedUpdate implements UpdateMessage {
  readonly type = 'update' as const;
  #withdrawn: readonly Prefix[] | undefined = undefined;
  #nlri: readonly Prefix[] | undefined = undefined;

  constructor(
    readonly withdrawnKeys: readonly PrefixKey[],
    readonly withdrawnPathIds: readonly number[] | undefined,
    readonly attributes: PathAttributes,
    readonly nlriKeys: readonly PrefixKey[],
    readonly nlriPathIds: readonly number[] | undefined,
    readonly issues: readonly AttributeIssue[] | undefined,
  ) {}

  get withdrawn(): readonly Prefix[] {
    return (this.#withdrawn ??= prefixes(this.withdrawnKeys));
  }

  get nlri(): readonly Prefix[] {
    return (this.#nlri ??= prefixes(this.nlriKeys));
  }

  toJSON(): UpdateMessage {
    return plainUpdate(this);
  }
}

export class ReceivedMpReach implements MpReach {
  #nlri: readonly Prefix[] | undefined = undefined;

  constructor(
    readonly afi: number,
    readonly safi: number,
    readonly nextHops: readonly Address[],
    readonly keys: readonly PrefixKey[],
    readonly pathIds: readonly number[] | undefined,
    readonly raw: Uint8Array | undefined,
  ) {}

  get nlri(): readonly Prefix[] {
    return (this.#nlri ??= prefixes(this.keys));
  }

  toJSON(): MpReach {
    return plainMpReach(this);
  }
}

export class ReceivedMpUnreach implements MpUnreach {
  #withdrawn: readonly Prefix[] | undefined = undefined;

  constructor(
    readonly afi: number,
    readonly safi: number,
    readonly keys: readonly PrefixKey[],
    readonly pathIds: readonly number[] | undefined,
    readonly raw: Uint8Array | undefined,
  ) {}

  get withdrawn(): readonly Prefix[] {
    return (this.#withdrawn ??= prefixes(this.keys));
  }

  toJSON(): MpUnreach {
    return plainMpUnreach(this);
  }
}

/** For a family the codec does not interpret (`raw` holds the bytes). */
export function rawMpReach(afi: number, safi: number, raw: Uint8Array): ReceivedMpReach {
  return new ReceivedMpReach(afi, safi, [], NO_KEYS, undefined, raw);
}

/** For a family the codec does not interpret (`raw` holds the bytes). */
export function rawMpUnreach(afi: number, safi: number, raw: Uint8Array): ReceivedMpUnreach {
  return new ReceivedMpUnreach(afi, safi, NO_KEYS, undefined, raw);
}

/**
 * An UPDATE (or any message) as plain data: every prefix list built, no key
 * lists, absent fields left out; what a hand-built message with the same
 * content looks like. For comparisons and serialisation, not the hot path.
 */
export function plainUpdate(m: UpdateMessage): UpdateMessage {
  const out: { -readonly [K in keyof UpdateMessage]: UpdateMessage[K] } = {
    type: 'update',
    withdrawn: m.withdrawn,
    attributes: plainAttributes(m.attributes),
    nlri: m.nlri,
  };
  if (m.withdrawnPathIds !== undefined) out.withdrawnPathIds = m.withdrawnPathIds;
  if (m.nlriPathIds !== undefined) out.nlriPathIds = m.nlriPathIds;
  if (m.issues !== undefined) out.issues = m.issues;
  return out;
}

function plainAttributes(a: PathAttributes): PathAttributes {
  if (a.mpReach === undefined && a.mpUnreach === undefined) return a;
  const out: { -readonly [K in keyof PathAttributes]: PathAttributes[K] } = { ...a };
  if (a.mpReach !== undefined) out.mpReach = plainMpReach(a.mpReach);
  if (a.mpUnreach !== undefined) out.mpUnreach = plainMpUnreach(a.mpUnreach);
  return out;
}

function plainMpReach(m: MpReach): MpReach {
  const out: { -readonly [K in keyof MpReach]: MpReach[K] } = { afi: m.afi, safi: m.safi, nextHops: m.nextHops, nlri: m.nlri };
  if (m.pathIds !== undefined) out.pathIds = m.pathIds;
  if (m.raw !== undefined) out.raw = m.raw;
  return out;
}

function plainMpUnreach(m: MpUnreach): MpUnreach {
  const out: { -readonly [K in keyof MpUnreach]: MpUnreach[K] } = { afi: m.afi, safi: m.safi, withdrawn: m.withdrawn };
  if (m.pathIds !== undefined) out.pathIds = m.pathIds;
  if (m.raw !== undefined) out.raw = m.raw;
  return out;
}
