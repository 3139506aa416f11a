/**
 * `tsbgp routes --received PEER`: what a peer sends us, like
 * `birdc show route protocol X` (and `all` for the pre-import side): every
 * route as received, before import policy, and what import made of it.
 */
import type { AdvertisedRoute, ImportedRoute, PeerState, ReceivedRoute, SpeakerApi } from '../speaker/index.js';
import { ControlError } from './control.js';

export interface RouteAttrsJson {
  readonly nextHop: string | null;
  readonly asPath: readonly number[];
  readonly origin: string | null;
  readonly med: number | null;
  readonly localPref: number | null;
  readonly communities: readonly string[];
  readonly largeCommunities: readonly string[];
}

export interface ReceivedRouteJson {
  readonly prefix: string;
  /** ADD-PATH path identifier, `null` without ADD-PATH. */
  readonly pathId: number | null;
  /** As the peer sent it (before import policy). */
  readonly received: RouteAttrsJson;
  /** After import policy, `null` when import rejected it. */
  readonly accepted: RouteAttrsJson | null;
  /** The best path for the prefix (used, and what others are sent). */
  readonly best: boolean;
  /** Kept from before the peer's restart (graceful restart), not yet refreshed. */
  readonly stale: boolean;
}

export interface ReceivedJson {
  readonly version: 1;
  readonly peer: string;
  readonly state: PeerState | null;
  readonly counts: { readonly received: number; readonly accepted: number; readonly rejected: number };
  readonly routes: readonly ReceivedRouteJson[];
}

function attrsJson(r: AdvertisedRoute): RouteAttrsJson {
  return {
    nextHop: r.nextHop ?? null,
    asPath: [...r.asPath],
    origin: r.origin ?? null,
    med: r.med ?? null,
    localPref: r.localPref ?? null,
    communities: [...r.communities],
    largeCommunities: [...r.largeCommunities],
  };
}

export function receivedJson(peer: string, state: PeerState | null, routes: readonly ImportedRoute[]): ReceivedJson {
  const out = routes.map(({ route, accepted }: { route: ReceivedRoute; accepted?: ReceivedRoute }) => ({
    prefix: route.prefix.toString(),
    pathId: route.pathId ?? null,
    received: attrsJson(route),
    accepted: accepted ? attrsJson(accepted) : null,
    best: accepted?.best ?? false,
    stale: route.stale,
  }));
  const accepted = out.filter((r) => r.accepted !== null).length;
  return { version: 1, peer, state, counts: { received: out.length, accepted, rejected: out.length - accepted }, routes: out };
}

function attrsText(a: RouteAttrsJson): string {
  return [
    a.nextHop ? `next hop ${a.nextHop}` : '',
    `AS path ${a.asPath.join(' ') || '(empty)'}`,
    a.origin ? `origin ${a.origin}` : '',
    a.med !== null ? `MED ${a.med}` : '',
    a.localPref !== null ? `local pref ${a.localPref}` : '',
    a.communities.length ? `communities ${a.communities.join(' ')}` : '',
    a.largeCommunities.length ? `large ${a.largeCommunities.join(' ')}` : '',
  ]
    .filter(Boolean)
    .join(', ');
}

export function renderReceived(v: ReceivedJson): string {
  const out = [
    `routes received from ${v.peer} (${v.state ?? 'unknown'}): ${v.counts.received} received, ` +
      `${v.counts.accepted} accepted, ${v.counts.rejected} rejected by import policy`,
  ];
  if (v.routes.length === 0) out.push(`  nothing received${v.state === 'Established' ? '' : ' (the session is not established)'}`);
  for (const r of v.routes) {
    const flags = [r.best ? 'best' : '', r.stale ? 'stale' : ''].filter(Boolean).join(', ');
    out.push(`  ${r.prefix}${r.pathId !== null ? ` path ${r.pathId}` : ''}  ${attrsText(r.received)}${flags ? `  [${flags}]` : ''}`);
    if (r.accepted === null) out.push('    import: rejected');
    else {
      const after = attrsText(r.accepted);
      out.push(`    import: accepted${after === attrsText(r.received) ? '' : `, as ${after}`}`);
    }
  }
  out.push('');
  return out.join('\n');
}

type WithImport = { receivedBeforeImport(peer: string): readonly ImportedRoute[] };

/** The control method `received`: `params.peer` must name a peer of the running speaker. */
export function receivedFor(speaker: SpeakerApi | undefined, peer: unknown): ReceivedJson {
  if (typeof peer !== 'string') throw new ControlError('bad-params', '"peer" must be a peer address');
  if (!speaker) throw new ControlError('unavailable', 'the BGP speaker is not running');
  const st = speaker.status().find((s) => s.address === peer);
  if (!st)
    throw new ControlError(
      'bad-params',
      `no peer ${peer} (peers: ${
        speaker
          .status()
          .map((s) => s.address)
          .join(', ') || 'none'
      })`,
    );
  // A speaker without the pre-import view (a test fake): what import accepted, each as received.
  const routes =
    typeof (speaker as Partial<WithImport>).receivedBeforeImport === 'function'
      ? (speaker as unknown as WithImport).receivedBeforeImport(peer)
      : speaker.received(peer).map((r) => ({ route: r, accepted: r }));
  return receivedJson(peer, st.state, routes);
}
