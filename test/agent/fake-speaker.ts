/**
 * An in-memory AgentSpeaker (src/agent/speaker-api.ts) for agent tests: it records every call, keeps
 * peers and originated routes, and lets a test play a peer's part
 * (session state changes, routes received).
 */
import { EventEmitter } from 'eventemitter3';
import { Prefix } from '../../src/net/index.js';
import { describeRoute, toPathAttributes } from '../../src/speaker/attributes.js';
import { parsePeerKey, validatePeerOptions } from '../../src/speaker/peer-config.js';
import type {
  AdvertisedRoute,
  PeerOptions,
  PeerState,
  PeerStatus,
  ReceivedRoute,
  OriginateOptions,
  RouteAttributes,
  SpeakerEvents,
  SpeakerOptions,
} from '../../src/speaker/types.js';
import type { AgentSpeaker } from '../../src/agent/speaker-api.js';

export type Call =
  | { op: 'start' }
  | { op: 'startBfd' }
  | { op: 'stop'; opts?: { message?: string; graceful?: boolean } }
  | { op: 'addPeer' | 'updatePeer'; opts: PeerOptions }
  | { op: 'removePeer'; address: string }
  | { op: 'originate'; prefix: string; attrs?: RouteAttributes; options?: OriginateOptions }
  | { op: 'withdraw'; prefix: string }
  | { op: 'setClusterId'; clusterId: string | undefined }
  | { op: 'drain' | 'undrain'; peers?: readonly string[] };

const toPrefix = (p: Prefix | string) => (typeof p === 'string' ? Prefix.parse(p) : p);

export class FakeSpeaker extends EventEmitter<SpeakerEvents> implements AgentSpeaker {
  readonly calls: Call[] = [];
  readonly peers = new Map<string, PeerOptions>();
  readonly routes = new Map<string, { prefix: Prefix; attrs?: RouteAttributes; iface?: string }>();
  readonly states = new Map<string, { state: PeerState; since: Date }>();
  readonly receivedRoutes: ReceivedRoute[] = [];
  started = false;
  stopped = false;

  constructor(
    readonly options?: SpeakerOptions,
    private readonly now: () => Date = () => new Date(0),
  ) {
    super();
  }

  async start(): Promise<void> {
    this.calls.push({ op: 'start' });
    this.started = true;
  }

  async startBfd(): Promise<void> {
    this.calls.push({ op: 'startBfd' });
  }

  async stop(opts?: { message?: string; graceful?: boolean }): Promise<void> {
    this.calls.push({ op: 'stop', opts });
    this.stopped = true;
  }

  /** The checks BgpSpeaker makes before it takes a peer (the same function), so a fake never accepts what the speaker refuses. */
  private validatePeer(opts: PeerOptions): void {
    validatePeerOptions(opts, this.options?.asn ?? 64512, this.options?.routerId ?? '192.0.2.1');
  }

  addPeer(opts: PeerOptions): void {
    if (this.peers.has(opts.address)) throw new Error(`peer ${opts.address} already exists`);
    this.validatePeer(opts);
    this.calls.push({ op: 'addPeer', opts });
    this.peers.set(opts.address, opts);
    this.states.set(opts.address, { state: 'Idle', since: this.now() });
  }

  updatePeer(opts: PeerOptions): void {
    if (!this.peers.has(opts.address)) throw new Error(`no peer ${opts.address}`);
    this.validatePeer(opts);
    this.calls.push({ op: 'updatePeer', opts });
    this.peers.set(opts.address, opts);
  }

  /** `address` may be a key `address:port` (the agent names a peer on a port other than 179 so); the fake holds one peer per address. */
  async removePeer(key: string): Promise<void> {
    const address = parsePeerKey(key).address;
    if (!this.peers.has(address)) throw new Error(`no peer ${key}`);
    this.calls.push({ op: 'removePeer', address });
    this.peers.delete(address);
    this.states.delete(address);
  }

  originate(prefix: Prefix | string, attrs?: RouteAttributes, options?: OriginateOptions): void {
    const p = toPrefix(prefix);
    // BgpSpeaker.originate converts the attributes with this function and throws what it throws.
    toPathAttributes(attrs ?? {}, p.family);
    this.calls.push({ op: 'originate', prefix: p.toString(), attrs, ...(options !== undefined ? { options } : {}) });
    this.routes.set(p.toString(), { prefix: p, attrs, ...(options?.iface !== undefined ? { iface: options.iface } : {}) });
  }

  withdraw(prefix: Prefix | string): void {
    const p = toPrefix(prefix);
    this.calls.push({ op: 'withdraw', prefix: p.toString() });
    this.routes.delete(p.toString());
  }

  status(): readonly PeerStatus[] {
    return [...this.peers.values()].map((o) => {
      const s = this.states.get(o.address) ?? { state: 'Idle' as const, since: this.now() };
      return {
        address: o.address,
        port: o.port ?? 179,
        asn: o.asn,
        description: o.description,
        state: s.state,
        since: s.since,
        counters: {
          messagesIn: 0,
          messagesOut: 0,
          updatesIn: 0,
          updatesOut: 0,
          prefixesReceived: 0,
          prefixesAccepted: 0,
          prefixesAdvertised: this.routes.size,
          families: this.familyCounts(o.address),
        },
      };
    });
  }

  /** Per-family counters as the real speaker keeps them (advertised: every route; received: what the test injected). */
  private familyCounts(address: string): NonNullable<PeerStatus['counters']['families']> {
    const c = (fam: 4 | 6) => {
      const received = this.receivedRoutes.filter((r) => r.peer === address && r.prefix.family === fam).length;
      return { received, accepted: received, advertised: [...this.routes.values()].filter((r) => r.prefix.family === fam).length };
    };
    return { ipv4: c(4), ipv6: c(6) };
  }

  /** Every originated route goes to every peer (the fake has no policy). */
  advertised(peer: string): readonly AdvertisedRoute[] {
    if (!this.peers.has(peer)) return [];
    return [...this.routes.values()].map(({ prefix, attrs }) => describeRoute(prefix, toPathAttributes(attrs ?? {}, prefix.family)));
  }

  received(peer?: string): readonly ReceivedRoute[] {
    return this.receivedRoutes.filter((r) => peer === undefined || r.peer === peer);
  }

  // Policies (AgentSpeaker's definePolicies) and route refresh.
  readonly policies = new Map<string, unknown>();
  definePolicy(name: string, definition: unknown): void {
    this.policies.set(name, definition);
  }
  definePolicies(config: unknown): void {
    this.policies.set('*', config);
  }
  clusterId: string | undefined;
  /** Whether every peer is draining (RFC 8326), as the agent last asked. */
  draining = false;

  drain(opts?: { readonly peers?: readonly string[] }): void {
    this.calls.push({ op: 'drain', ...(opts?.peers ? { peers: opts.peers } : {}) });
    if (!opts?.peers) this.draining = true;
  }

  undrain(opts?: { readonly peers?: readonly string[] }): void {
    this.calls.push({ op: 'undrain', ...(opts?.peers ? { peers: opts.peers } : {}) });
    if (!opts?.peers) this.draining = false;
  }

  setClusterId(clusterId: string | undefined): void {
    this.calls.push({ op: 'setClusterId', clusterId });
    this.clusterId = clusterId;
  }
  requestRouteRefresh(address: string): void {
    if (!this.peers.has(address)) throw new Error(`no peer ${address}`);
  }

  // ---- the peer's side, for tests ----

  setState(address: string, state: PeerState, at: Date = this.now()): void {
    const prev = this.states.get(address);
    if (!prev) throw new Error(`no peer ${address}`);
    this.states.set(address, { state, since: at });
    const status = this.status().find((s) => s.address === address)!;
    this.emit('stateChange', status, prev.state);
    if (state === 'Established') this.emit('peerUp', status);
    else if (prev.state === 'Established') this.emit('peerDown', status, 'test');
  }

  /** A route from `peer`: `communities` standard (`aa:nn`) and large (`aa:nn:mm`) alike. */
  receive(peer: string, prefix: string, communities: string[] = [], asPath: number[] = [], extendedCommunities: string[] = []): void {
    const isLarge = (c: string) => c.split(':').length === 3;
    const route: ReceivedRoute = {
      peer,
      prefix: Prefix.parse(prefix),
      asPath,
      communities: communities.filter((c) => !isLarge(c)),
      largeCommunities: communities.filter(isLarge),
      ...(extendedCommunities.length > 0 ? { extendedCommunities } : {}),
      best: true,
      stale: false,
    };
    const i = this.receivedRoutes.findIndex((r) => r.peer === peer && r.prefix.equals(route.prefix));
    if (i >= 0) this.receivedRoutes.splice(i, 1);
    this.receivedRoutes.push(route);
    this.emit('routeReceived', route);
    this.emit('updateReceived', peer);
  }

  lose(peer: string, prefix: string): void {
    const p = Prefix.parse(prefix);
    const i = this.receivedRoutes.findIndex((r) => r.peer === peer && r.prefix.equals(p));
    if (i >= 0) this.receivedRoutes.splice(i, 1);
    this.emit('routeWithdrawn', peer, p);
    this.emit('updateReceived', peer);
  }

  /** Applies reconcile operations the way the agent does (for pure-layer tests). */
  opsSince(mark: number): Call[] {
    return this.calls.slice(mark);
  }
}
