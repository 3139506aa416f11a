/**
 * fast-check arbitraries for every message but UPDATE, and an independent
 * size oracle (field sizes straight from the RFCs) used to predict when an
 * OPEN needs the RFC 9072 extended format.
 */
import fc from 'fast-check';
import { formatV4 } from '../../src/net/address.js';
import { DEFAULT_CONTEXT, LEGACY_CONTEXT, type CodecContext } from '../../src/wire/context.js';
import type { Capability, KeepaliveMessage, NotificationMessage, OpenMessage, OptionalParameter, RouteRefreshMessage } from '../../src/wire/types.js';

/** Records with an ordinary prototype, so toStrictEqual compares them with decoded messages. */
function rec<T>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }): fc.Arbitrary<T> {
  return fc.record(model, { noNullPrototype: true }) as unknown as fc.Arbitrary<T>;
}

const KNOWN_CODES = new Set([1, 2, 5, 6, 64, 65, 69, 70, 71, 73]);
const utf8 = new TextEncoder();

export const afi = fc.integer({ min: 0, max: 0xffff });
export const safi = fc.integer({ min: 0, max: 0xff });

/** Text for FQDN fields: whole characters, at most 100 bytes of UTF-8. */
const fqdnText = fc.string({ unit: 'grapheme', maxLength: 24 }).filter((s) => utf8.encode(s).length <= 100);

export const capabilityArb: fc.Arbitrary<Capability> = fc.oneof(
  rec({ kind: fc.constant('multiprotocol' as const), afi, safi }),
  fc.constant({ kind: 'routeRefresh' as const }),
  fc.constant({ kind: 'enhancedRouteRefresh' as const }),
  fc.constant({ kind: 'extendedMessage' as const }),
  rec({ kind: fc.constant('fourOctetAs' as const), asn: fc.integer({ min: 0, max: 0xffffffff }) }),
  rec({
    kind: fc.constant('gracefulRestart' as const),
    restarting: fc.boolean(),
    notification: fc.boolean(),
    restartTime: fc.integer({ min: 0, max: 4095 }),
    families: fc.array(rec({ afi, safi, forwardingPreserved: fc.boolean() }), { maxLength: 8 }),
  }),
  rec({
    kind: fc.constant('longLivedGracefulRestart' as const),
    families: fc.array(rec({ afi, safi, forwardingPreserved: fc.boolean(), staleTime: fc.integer({ min: 0, max: 0xffffff }) }), { maxLength: 8 }),
  }),
  rec({
    kind: fc.constant('addPath' as const),
    families: fc.array(rec({ afi, safi, mode: fc.constantFrom('receive' as const, 'send' as const, 'both' as const) }), { maxLength: 8 }),
  }),
  rec({
    kind: fc.constant('extendedNextHop' as const),
    entries: fc.array(rec({ afi, safi: fc.integer({ min: 0, max: 0xffff }), nextHopAfi: afi }), { maxLength: 8 }),
  }),
  rec({ kind: fc.constant('fqdn' as const), hostname: fqdnText, domain: fqdnText }),
  rec({
    kind: fc.constant('unknown' as const),
    code: fc.integer({ min: 0, max: 255 }).filter((c) => !KNOWN_CODES.has(c)),
    value: fc.oneof(fc.uint8Array({ maxLength: 12 }), fc.uint8Array({ minLength: 60, maxLength: 200 })),
  }),
);

/** Capability value length per the RFC layouts (not the codec's own code). */
export function capabilityValueLength(c: Capability): number {
  switch (c.kind) {
    case 'multiprotocol':
    case 'fourOctetAs':
      return 4;
    case 'routeRefresh':
    case 'enhancedRouteRefresh':
    case 'extendedMessage':
      return 0;
    case 'gracefulRestart':
      return 2 + 4 * c.families.length;
    case 'addPath':
      return 4 * c.families.length;
    case 'longLivedGracefulRestart':
      return 7 * c.families.length;
    case 'extendedNextHop':
      return 6 * c.entries.length;
    case 'fqdn':
      return 2 + utf8.encode(c.hostname).length + utf8.encode(c.domain).length;
    case 'unknown':
      return c.value.length;
  }
}

/** Whether RFC 4271's one-byte lengths can carry these parameters. */
export function fitsPlainParams(params: readonly OptionalParameter[]): boolean {
  const lengths = params.map((p) => (p.capabilities ?? []).reduce((n, c) => n + 2 + capabilityValueLength(c), 0));
  return lengths.every((l) => l <= 255) && lengths.reduce((n, l) => n + 2 + l, 0) <= 255;
}

const bgpId = fc.integer({ min: 1, max: 0xffffffff }).map(formatV4);
const holdTime = fc.oneof(fc.constant(0), fc.integer({ min: 3, max: 0xffff }));

/** OPENs the decoder accepts: version 4, legal hold time, non-zero identifier, capability parameters only. */
export const openArb: fc.Arbitrary<OpenMessage> = fc
  .record({
    myAs: fc.integer({ min: 0, max: 0xffff }),
    holdTime,
    bgpId,
    params: fc.array(
      fc.array(capabilityArb, { maxLength: 4 }).map((capabilities): OptionalParameter => ({ type: 2, capabilities })),
      { maxLength: 3 },
    ),
    extended: fc.boolean(),
  })
  .map(({ extended, ...rest }): OpenMessage => {
    const open: OpenMessage = { type: 'open', version: 4, ...rest };
    return extended ? { ...open, extendedParams: true } : open;
  });

export const notificationArb: fc.Arbitrary<NotificationMessage> = rec({
  type: fc.constant('notification' as const),
  code: fc.integer({ min: 0, max: 255 }),
  subcode: fc.integer({ min: 0, max: 255 }),
  data: fc.uint8Array({ maxLength: 200 }),
});

export const keepaliveArb: fc.Arbitrary<KeepaliveMessage> = fc.constant({ type: 'keepalive' as const });

export const routeRefreshArb: fc.Arbitrary<RouteRefreshMessage> = rec({
  type: fc.constant('routeRefresh' as const),
  afi,
  subtype: fc.integer({ min: 0, max: 255 }),
  safi,
});

export type NonUpdateMessage = OpenMessage | NotificationMessage | KeepaliveMessage | RouteRefreshMessage;

export const nonUpdateMessageArb: fc.Arbitrary<NonUpdateMessage> = fc.oneof(openArb, notificationArb, keepaliveArb, routeRefreshArb);

/** The codec contexts a session can end up with. */
export const CONTEXTS: readonly (readonly [string, CodecContext])[] = [
  ['default', DEFAULT_CONTEXT],
  ['legacy', LEGACY_CONTEXT],
  ['extended message + ADD-PATH', { asn4: true, extendedMessage: true, addPathV4: true, addPathV6: true }],
  ['2-byte AS + extended message', { asn4: false, extendedMessage: true, addPathV4: false, addPathV6: true }],
];

/** Parses spaced/commented hex as written in the tests ("ff ff  # marker"). */
export function hex(text: string): Uint8Array {
  const digits = text
    .split('\n')
    .map((line) => line.replace(/#.*$/, ''))
    .join('')
    .replace(/\s+/g, '');
  if (digits.length % 2 !== 0 || /[^0-9a-f]/i.test(digits)) throw new Error(`bad hex fixture: ${digits}`);
  const out = new Uint8Array(digits.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(digits.slice(2 * i, 2 * i + 2), 16);
  return out;
}
