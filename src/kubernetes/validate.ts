import { Address, ParseError, Prefix, type Family } from '../net/index.js';
import type {
  BGPConfiguration,
  BGPFilter,
  BGPPeer,
  BlockAffinity,
  Secret,
  BlockState,
  CommunityValue,
  Endpoint,
  EndpointAddressType,
  EndpointSlice,
  FilterOperation,
  FilterRule,
  InterfaceAddress,
  IPPool,
  Labels,
  Node,
  PrefixAdvertisement,
  Resource,
  ResourceKind,
  SecretKeyRef,
  Service,
  ServiceType,
} from './resources.js';
import { CALICO_ANNOTATIONS, describe, isNamespaced, resourceKey, SERVICE_NAME_LABEL } from './resources.js';
import { unknownFields } from './schema.js';
import { SecretValue } from './secrets.js';
import { parseCommunityLiteral as parseLiteral } from '../wire/communities.js';
import { ALL, parseSelector, SelectorError, type Selector } from './selector.js';

/**
 * One problem found in user input, with where it is. An `error` skips the
 * resource; a `warning` (an unknown field, a Calico feature tsbgp lacks) keeps
 * it but must be seen; `ignored` is informational (kinds and Calico fields
 * that are not tsbgp's business).
 */
export interface ManifestIssue {
  readonly severity: 'error' | 'warning' | 'ignored';
  readonly file?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** Dotted field path inside the resource, e.g. `spec.exportV4[0].matchOperator`. */
  readonly path?: string;
  readonly message: string;
}

/** `file: Kind ns/name: path: message`, skipping what is unknown. */
export function formatIssue(i: ManifestIssue): string {
  const parts: string[] = [];
  if (i.file) parts.push(i.file);
  if (i.kind) parts.push(describe(i.kind, i.name, i.namespace));
  if (i.path) parts.push(i.path);
  parts.push(i.message);
  return parts.join(': ');
}

/** Thrown inside a resource's validator; caught per resource so the rest still applies. */
class FieldError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** The field errors noted so far for the resource being validated (see `soft`); null outside validateObject. */
let noted: FieldError[] | null = null;

/**
 * Reads a field that does not depend on the others: its FieldError is noted
 * and `fallback` used, so one pass reports every independent mistake of a
 * resource instead of the first only. Errors that make the rest meaningless
 * (a spec that is not a map) are still thrown.
 */
function soft<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch (e) {
    if (!(e instanceof FieldError) || noted === null) throw e;
    noted.push(e);
    return fallback;
  }
}

/** Notes an error and goes on (see `soft`). */
function report(path: string, message: string): void {
  const e = new FieldError(path, message);
  if (noted === null) throw e;
  noted.push(e);
}

/** Each element read by `fn`, those in error noted (see `soft`) and left out. */
function softEach<T, R>(list: readonly T[], fn: (item: T, index: number) => R): R[] {
  const out: R[] = [];
  list.forEach((item, i) => {
    const r = soft<{ v: R } | undefined>(() => ({ v: fn(item, i) }), undefined);
    if (r) out.push(r.v);
  });
  return out;
}

const CALICO_API = ['projectcalico.org/v3', 'crd.projectcalico.org/v1'];
const API_VERSIONS: Record<ResourceKind, readonly string[]> = {
  Node: ['v1'],
  Service: ['v1'],
  EndpointSlice: ['discovery.k8s.io/v1'],
  BGPConfiguration: CALICO_API,
  BGPPeer: CALICO_API,
  IPPool: CALICO_API,
  BGPFilter: CALICO_API,
  BlockAffinity: CALICO_API,
  Secret: ['v1'],
};

export function isKnownKind(kind: unknown): kind is ResourceKind {
  return typeof kind === 'string' && Object.hasOwn(API_VERSIONS, kind);
}

// ---------- field readers: each throws FieldError naming the path ----------

type Obj = Record<string, unknown>;

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'a map' : `${typeof v} ${JSON.stringify(v)}`;
}

function asObj(v: unknown, path: string): Obj {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new FieldError(path, `expected a map, got ${typeName(v)}`);
  return v as Obj;
}

function asList(v: unknown, path: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new FieldError(path, `expected a list, got ${typeName(v)}`);
  return v;
}

function optStr(o: Obj, key: string, path: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new FieldError(`${path}${key}`, `expected a string, got ${typeName(v)}`);
  return v;
}

function reqStr(o: Obj, key: string, path: string): string {
  const v = optStr(o, key, path);
  if (v === undefined || v === '') throw new FieldError(`${path}${key}`, 'is required');
  return v;
}

function optBool(o: Obj, key: string, path: string): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new FieldError(`${path}${key}`, `expected true or false, got ${typeName(v)}`);
  return v;
}

function optInt(o: Obj, key: string, path: string, min: number, max: number): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  return intValue(v, `${path}${key}`, min, max);
}

function intValue(v: unknown, path: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new FieldError(path, `expected an integer, got ${typeName(v)}`);
  if (v < min || v > max) throw new FieldError(path, `${v} is out of range (${min} to ${max})`);
  return v;
}

function optEnum<T extends string>(o: Obj, key: string, path: string, values: readonly T[]): T | undefined {
  const v = optStr(o, key, path);
  if (v === undefined) return undefined;
  if (!(values as readonly string[]).includes(v)) {
    throw new FieldError(`${path}${key}`, `unknown value ${JSON.stringify(v)} (expected one of ${values.join(', ')})`);
  }
  return v as T;
}

function prefixValue(v: unknown, path: string): Prefix {
  if (typeof v !== 'string') throw new FieldError(path, `expected a CIDR string, got ${typeName(v)}`);
  try {
    return Prefix.parse(v);
  } catch (e) {
    if (e instanceof ParseError) throw new FieldError(path, e.message);
    throw e;
  }
}

function addressValue(v: unknown, path: string): Address {
  if (typeof v !== 'string') throw new FieldError(path, `expected an IP address string, got ${typeName(v)}`);
  try {
    return Address.parse(v);
  } catch (e) {
    if (e instanceof ParseError) throw new FieldError(path, e.message);
    throw e;
  }
}

function selectorValue(o: Obj, key: string, path: string): Selector | undefined {
  const v = optStr(o, key, path);
  if (v === undefined || v.trim() === '') return undefined;
  try {
    return parseSelector(v);
  } catch (e) {
    if (e instanceof SelectorError) throw new FieldError(`${path}${key}`, e.message);
    throw e;
  }
}

function labelMap(v: unknown, path: string): Labels {
  const o = asObj(v, path);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(o)) {
    if (typeof val !== 'string') throw new FieldError(`${path}.${k}`, `expected a string value, got ${typeName(val)}`);
    out[k] = val;
  }
  return out;
}

/** uint32 AS number; also accepts asdot `x.y` text as Calico does. */
function asNumberValue(v: unknown, path: string): number {
  if (typeof v === 'string') {
    const m = /^(\d+)(?:\.(\d+))?$/.exec(v.trim());
    if (!m) throw new FieldError(path, `expected an AS number, got ${JSON.stringify(v)}`);
    const n = m[2] === undefined ? Number(m[1]) : Number(m[1]) * 65536 + Number(m[2]);
    if (m[2] !== undefined && (Number(m[1]) > 65535 || Number(m[2]) > 65535)) throw new FieldError(path, `asdot parts must be 0 to 65535, got ${JSON.stringify(v)}`);
    return intValue(n, path, 1, 0xffffffff);
  }
  return intValue(v, path, 1, 0xffffffff);
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

/** Go duration text (`120s`, `2m30s`, `1h`) to seconds. */
function durationValue(o: Obj, key: string, path: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  const p = `${path}${key}`;
  if (typeof v !== 'string') throw new FieldError(p, `expected a duration such as "120s", got ${typeName(v)}`);
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  if (v === '0') return 0;
  while (at < v.length) {
    re.lastIndex = at;
    const m = re.exec(v);
    if (!m) throw new FieldError(p, `expected a duration such as "120s" or "2m", got ${JSON.stringify(v)}`);
    total += Number(m[1]) * DURATION_UNITS[m[2]];
    at = re.lastIndex;
  }
  if (v.length === 0) throw new FieldError(p, 'empty duration');
  return total;
}

function secretRef(v: unknown, path: string): SecretKeyRef | undefined {
  if (v === undefined || v === null) return undefined;
  const o = asObj(v, path);
  const ref = asObj(o.secretKeyRef, `${path}.secretKeyRef`);
  if (o.secretKeyRef === undefined) throw new FieldError(`${path}.secretKeyRef`, 'is required');
  return { name: reqStr(ref, 'name', `${path}.secretKeyRef.`), key: reqStr(ref, 'key', `${path}.secretKeyRef.`) };
}

/** `aa:nn` (16-bit parts) or `aa:nn:mm` (32-bit parts), read by the one community parser (src/wire/communities.ts); undefined when `text` is not a literal at all. */
export function parseCommunityLiteral(text: string): CommunityValue | undefined | Error {
  try {
    const c = parseLiteral(text);
    return c && { ...c, text };
  } catch (e) {
    return e as Error;
  }
}

function communityValue(v: unknown, path: string): CommunityValue {
  if (typeof v !== 'string') throw new FieldError(path, `expected a community "aa:nn" or "aa:nn:mm", got ${typeName(v)}`);
  const c = parseCommunityLiteral(v);
  if (c === undefined) throw new FieldError(path, `expected a community "aa:nn" or "aa:nn:mm", got ${JSON.stringify(v)}`);
  if (c instanceof Error) throw new FieldError(path, c.message);
  return c;
}

// ---------- per kind ----------

interface Meta {
  name: string;
  namespace?: string;
  labels: Labels;
  annotations: Labels;
}

function validateNode(o: Obj, m: Meta): Node {
  const spec = asObj(o.spec, 'spec');
  const status = asObj(o.status, 'status');
  const a = m.annotations;
  const ifAddr = (key: string, family: Family): InterfaceAddress | undefined => {
    const text = a[key];
    if (text === undefined || text === '') return undefined;
    const path = `metadata.annotations.${key}`;
    const [addr, len, extra] = text.split('/');
    if (extra !== undefined) throw new FieldError(path, `expected an address or address/length, got ${JSON.stringify(text)}`);
    const address = addressValue(addr, path);
    if (address.family !== family) throw new FieldError(path, `expected an IPv${family} address, got ${JSON.stringify(text)}`);
    if (len === undefined) return { address };
    const max = family === 4 ? 32 : 128;
    if (!/^\d+$/.test(len) || Number(len) > max) throw new FieldError(path, `prefix length ${JSON.stringify(len)} is not 0 to ${max}`);
    return { address, length: Number(len) };
  };
  const internalIPs: Address[] = [];
  softEach(soft(() => asList(status.addresses, 'status.addresses'), []), (e, i) => {
    const p = `status.addresses[${i}]`;
    const entry = asObj(e, p);
    if (optStr(entry, 'type', `${p}.`) === 'InternalIP') internalIPs.push(addressValue(entry.address, `${p}.address`));
  });
  const podCIDRs = softEach(soft(() => asList(spec.podCIDRs, 'spec.podCIDRs'), []), (c, i) => prefixValue(c, `spec.podCIDRs[${i}]`));
  if (podCIDRs.length === 0 && typeof spec.podCIDR === 'string' && spec.podCIDR !== '') soft(() => podCIDRs.push(prefixValue(spec.podCIDR, 'spec.podCIDR')), 0);
  const asText = a[CALICO_ANNOTATIONS.asNumber];
  const rr = a[CALICO_ANNOTATIONS.rrClusterId];
  if (rr !== undefined && rr !== '') {
    let v4 = false;
    try {
      v4 = Address.parse(rr).family === 4;
    } catch {
      // not an address at all: reported below
    }
    if (!v4) report(`metadata.annotations.${CALICO_ANNOTATIONS.rrClusterId}`, `a route reflector cluster ID is a dotted-quad IPv4 value, got ${JSON.stringify(rr)}`);
  }
  return {
    kind: 'Node',
    name: m.name,
    labels: m.labels,
    annotations: m.annotations,
    asNumber: asText === undefined || asText === '' ? undefined : soft(() => asNumberValue(asText, `metadata.annotations.${CALICO_ANNOTATIONS.asNumber}`), undefined),
    ipv4Address: soft(() => ifAddr(CALICO_ANNOTATIONS.ipv4Address, 4), undefined),
    ipv6Address: soft(() => ifAddr(CALICO_ANNOTATIONS.ipv6Address, 6), undefined),
    routeReflectorClusterId: rr === '' ? undefined : rr,
    internalIPs,
    podCIDRs,
  };
}

const SERVICE_TYPES: readonly ServiceType[] = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];

function validateService(o: Obj, m: Meta): Service {
  const spec = asObj(o.spec, 'spec');
  const status = asObj(o.status, 'status');
  const type = soft(() => optEnum(spec, 'type', 'spec.', SERVICE_TYPES), undefined) ?? 'ClusterIP';
  let headless = false;
  let clusterIPs: Address[] = [];
  const listed = asList(spec.clusterIPs, 'spec.clusterIPs');
  const single = optStr(spec, 'clusterIP', 'spec.');
  const texts: { v: unknown; path: string }[] = listed.length > 0 ? listed.map((v, i) => ({ v, path: `spec.clusterIPs[${i}]` })) : single ? [{ v: single, path: 'spec.clusterIP' }] : [];
  if (texts.some((t) => t.v === 'None')) headless = true;
  else clusterIPs = softEach(texts.filter((t) => t.v !== ''), (t) => addressValue(t.v, t.path));
  if (single && listed.length > 0 && single !== 'None' && single !== listed[0]) {
    report('spec.clusterIP', `must equal spec.clusterIPs[0] (${JSON.stringify(listed[0])}), got ${JSON.stringify(single)}`);
  }
  const externalIPs = softEach(soft(() => asList(spec.externalIPs, 'spec.externalIPs'), []), (v, i) => addressValue(v, `spec.externalIPs[${i}]`));
  const lb = soft(() => asObj(status.loadBalancer, 'status.loadBalancer'), {});
  const loadBalancerIngressIPs: Address[] = [];
  softEach(soft(() => asList(lb.ingress, 'status.loadBalancer.ingress'), []), (e, i) => {
    const p = `status.loadBalancer.ingress[${i}]`;
    const entry = asObj(e, p);
    const ip = optStr(entry, 'ip', `${p}.`);
    if (ip) loadBalancerIngressIPs.push(addressValue(ip, `${p}.ip`));
  });
  const specLb = soft(() => optStr(spec, 'loadBalancerIP', 'spec.'), undefined);
  const ipFamilies = softEach(soft(() => asList(spec.ipFamilies, 'spec.ipFamilies'), []), (f, i): Family => {
    if (f === 'IPv4') return 4;
    if (f === 'IPv6') return 6;
    throw new FieldError(`spec.ipFamilies[${i}]`, `unknown value ${JSON.stringify(f)} (expected one of IPv4, IPv6)`);
  });
  if (ipFamilies.length === 0) {
    for (const a of clusterIPs) if (!ipFamilies.includes(a.family)) ipFamilies.push(a.family);
    if (ipFamilies.length === 0) ipFamilies.push(4);
  }
  return {
    kind: 'Service',
    namespace: m.namespace ?? 'default',
    name: m.name,
    labels: m.labels,
    type,
    headless,
    clusterIPs,
    externalIPs,
    loadBalancerIngressIPs,
    specLoadBalancerIP: specLb ? soft(() => addressValue(specLb, 'spec.loadBalancerIP'), undefined) : undefined,
    externalTrafficPolicy: soft(() => optEnum(spec, 'externalTrafficPolicy', 'spec.', ['Cluster', 'Local'] as const), undefined) ?? 'Cluster',
    ipFamilies,
  };
}

function validateEndpointSlice(o: Obj, m: Meta): EndpointSlice {
  const addressType = optEnum<EndpointAddressType>(o, 'addressType', '', ['IPv4', 'IPv6', 'FQDN']);
  if (addressType === undefined) throw new FieldError('addressType', 'is required (IPv4, IPv6 or FQDN)');
  const endpoints = softEach(asList(o.endpoints, 'endpoints'), (e, i): Endpoint => {
    const p = `endpoints[${i}]`;
    const entry = asObj(e, p);
    const cond = asObj(entry.conditions, `${p}.conditions`);
    return { nodeName: optStr(entry, 'nodeName', `${p}.`), ready: optBool(cond, 'ready', `${p}.conditions.`) !== false };
  });
  const svc = m.labels[SERVICE_NAME_LABEL];
  return { kind: 'EndpointSlice', namespace: m.namespace ?? 'default', name: m.name, serviceName: svc === '' ? undefined : svc, addressType, endpoints };
}

function cidrList(spec: Obj, key: string): Prefix[] {
  return softEach(soft(() => asList(spec[key], `spec.${key}`), []), (e, i) => {
    const p = `spec.${key}[${i}]`;
    const entry = asObj(e, p);
    if (entry.cidr === undefined) throw new FieldError(`${p}.cidr`, 'is required');
    return prefixValue(entry.cidr, `${p}.cidr`);
  });
}

function validateBGPConfiguration(o: Obj, m: Meta): BGPConfiguration {
  const spec = asObj(o.spec, 'spec');
  const communities = softEach(soft(() => asList(spec.communities, 'spec.communities'), []), (e, i) => {
    const p = `spec.communities[${i}]`;
    const entry = asObj(e, p);
    const name = reqStr(entry, 'name', `${p}.`);
    if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new FieldError(`${p}.name`, `community names use letters, digits, "-" and "_", got ${JSON.stringify(name)}`);
    return { name, value: communityValue(entry.value, `${p}.value`) };
  });
  const seen = new Set<string>();
  communities.forEach((c, i) => {
    if (seen.has(c.name)) report(`spec.communities[${i}].name`, `duplicate community name ${JSON.stringify(c.name)}`);
    seen.add(c.name);
  });
  const prefixAdvertisements =
    spec.prefixAdvertisements === undefined || spec.prefixAdvertisements === null
      ? undefined
      : softEach(soft(() => asList(spec.prefixAdvertisements, 'spec.prefixAdvertisements'), []), (e, i): PrefixAdvertisement => {
          const p = `spec.prefixAdvertisements[${i}]`;
          const entry = asObj(e, p);
          if (entry.cidr === undefined) throw new FieldError(`${p}.cidr`, 'is required');
          const cidr = prefixValue(entry.cidr, `${p}.cidr`);
          const list = softEach(asList(entry.communities, `${p}.communities`), (c, j) => {
            const cp = `${p}.communities[${j}]`;
            if (typeof c !== 'string' || c === '') throw new FieldError(cp, `expected a community name or "aa:nn" literal, got ${typeName(c)}`);
            const lit = parseCommunityLiteral(c);
            if (lit instanceof Error) throw new FieldError(cp, lit.message);
            if (lit === undefined && m.name === 'default' && !seen.has(c)) throw new FieldError(cp, `community name ${JSON.stringify(c)} is not defined in spec.communities`);
            return c;
          });
          return { cidr, communities: list };
        });
  const asNumber = spec.asNumber === undefined || spec.asNumber === null ? undefined : soft(() => asNumberValue(spec.asNumber, 'spec.asNumber'), undefined);
  return {
    kind: 'BGPConfiguration',
    name: m.name,
    asNumber,
    nodeToNodeMeshEnabled: soft(() => optBool(spec, 'nodeToNodeMeshEnabled', 'spec.'), undefined),
    serviceClusterIPs: cidrList(spec, 'serviceClusterIPs'),
    serviceExternalIPs: cidrList(spec, 'serviceExternalIPs'),
    serviceLoadBalancerIPs: cidrList(spec, 'serviceLoadBalancerIPs'),
    serviceLoadBalancerAggregation: soft(() => optEnum(spec, 'serviceLoadBalancerAggregation', 'spec.', ['Enabled', 'Disabled'] as const), undefined) ?? 'Enabled',
    communities,
    prefixAdvertisements,
    listenPort: soft(() => optInt(spec, 'listenPort', 'spec.', 1, 65535), undefined),
    nodeMeshPassword: soft(() => secretRef(spec.nodeMeshPassword, 'spec.nodeMeshPassword'), undefined),
    nodeMeshMaxRestartTime: soft(() => durationValue(spec, 'nodeMeshMaxRestartTime', 'spec.'), undefined),
    bindMode: soft(() => optEnum(spec, 'bindMode', 'spec.', ['None', 'NodeIP'] as const), undefined),
    logSeverityScreen: soft(() => optEnum(spec, 'logSeverityScreen', 'spec.', ['Trace', 'Debug', 'Info', 'Warning', 'Error', 'Fatal'] as const), undefined),
    programClusterRoutes: soft(() => optEnum(spec, 'programClusterRoutes', 'spec.', ['Enabled', 'Disabled', 'EnabledIPIPOnly', 'EnabledNoEncapOnly'] as const), undefined),
  };
}

/** `ip`, `ip:port` or `[v6]:port`. */
function peerIPValue(text: string, path: string): { address: Address; port?: number } {
  let host = text;
  let port: string | undefined;
  if (text.startsWith('[')) {
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
    if (!m) throw new FieldError(path, `expected ip, ip:port or [ipv6]:port, got ${JSON.stringify(text)}`);
    host = m[1];
    port = m[2];
  } else if (text.split(':').length === 2) {
    [host, port] = text.split(':');
  }
  const address = addressValue(host, path);
  if (port === undefined) return { address };
  if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) throw new FieldError(path, `port ${JSON.stringify(port)} is not 1 to 65535`);
  return { address, port: Number(port) };
}

function validateBGPPeer(o: Obj, m: Meta): BGPPeer {
  const spec = asObj(o.spec, 'spec');
  // A field in error reads as null below: set, but not checked against the others (its own error says enough).
  const node = soft(() => optStr(spec, 'node', 'spec.') || undefined, null);
  const nodeSelector = soft(() => selectorValue(spec, 'nodeSelector', 'spec.'), null);
  if (node && nodeSelector) report('spec.nodeSelector', 'cannot be set together with spec.node');
  const peerSelector = soft(() => selectorValue(spec, 'peerSelector', 'spec.'), null);
  const peerIPText = soft(() => optStr(spec, 'peerIP', 'spec.') || undefined, null);
  const asNumber = spec.asNumber === undefined || spec.asNumber === null ? undefined : soft(() => asNumberValue(spec.asNumber, 'spec.asNumber'), null);
  if (peerSelector) {
    if (peerIPText !== undefined) throw new FieldError('spec.peerIP', 'cannot be set together with spec.peerSelector');
    if (asNumber !== undefined) throw new FieldError('spec.asNumber', 'cannot be set together with spec.peerSelector (the remote AS comes from the selected node)');
  } else if (peerSelector === undefined) {
    if (asNumber === undefined) throw new FieldError('spec.asNumber', 'is required when spec.peerSelector is not set');
    if (peerIPText === undefined) throw new FieldError('spec.peerIP', 'is required when spec.peerSelector is not set');
  }
  const nextHopMode = soft(() => optEnum(spec, 'nextHopMode', 'spec.', ['Auto', 'Self', 'Keep'] as const), null);
  const keepOriginalNextHop = soft(() => optBool(spec, 'keepOriginalNextHop', 'spec.'), undefined) ?? false;
  if (keepOriginalNextHop && nextHopMode && nextHopMode !== 'Keep') {
    throw new FieldError('spec.keepOriginalNextHop', `contradicts spec.nextHopMode ${nextHopMode} (keepOriginalNextHop is the deprecated form of nextHopMode Keep)`);
  }
  const filters = softEach(soft(() => asList(spec.filters, 'spec.filters'), []), (f, i) => {
    if (typeof f !== 'string' || f === '') throw new FieldError(`spec.filters[${i}]`, `expected a BGPFilter name, got ${typeName(f)}`);
    return f;
  });
  const reachable = soft(() => optStr(spec, 'reachableBy', 'spec.'), undefined);
  return {
    kind: 'BGPPeer',
    name: m.name,
    node: node ?? undefined,
    nodeSelector: nodeSelector ?? undefined,
    peerIP: peerIPText ? soft(() => peerIPValue(peerIPText, 'spec.peerIP'), undefined) : undefined,
    asNumber: asNumber ?? undefined,
    peerSelector: peerSelector ?? undefined,
    localASNumber: spec.localASNumber === undefined || spec.localASNumber === null ? undefined : soft(() => asNumberValue(spec.localASNumber, 'spec.localASNumber'), undefined),
    password: soft(() => secretRef(spec.password, 'spec.password'), undefined),
    sourceAddress: soft(() => optEnum(spec, 'sourceAddress', 'spec.', ['UseNodeIP', 'None'] as const), undefined) ?? 'UseNodeIP',
    nextHopMode: nextHopMode ?? undefined,
    keepOriginalNextHop,
    maxRestartTime: soft(() => durationValue(spec, 'maxRestartTime', 'spec.'), undefined),
    keepaliveTime: soft(() => durationValue(spec, 'keepaliveTime', 'spec.'), undefined),
    numAllowedLocalASNumbers: soft(() => optInt(spec, 'numAllowedLocalASNumbers', 'spec.', 0, 10), undefined),
    ttlSecurity: soft(() => optInt(spec, 'ttlSecurity', 'spec.', 0, 255), undefined),
    filters,
    reachableBy: reachable ? soft(() => addressValue(reachable, 'spec.reachableBy'), undefined) : undefined,
    reversePeering: soft(() => optEnum(spec, 'reversePeering', 'spec.', ['Auto', 'Manual'] as const), undefined) ?? 'Auto',
  };
}

function validateIPPool(o: Obj, m: Meta): IPPool {
  const spec = asObj(o.spec, 'spec');
  if (spec.cidr === undefined) throw new FieldError('spec.cidr', 'is required');
  const cidr = prefixValue(spec.cidr, 'spec.cidr');
  const [lo, hi] = cidr.family === 4 ? [20, 32] : [116, 128];
  const blockSize = optInt(spec, 'blockSize', 'spec.', lo, hi) ?? (cidr.family === 4 ? 26 : 122);
  if (blockSize < cidr.length) throw new FieldError('spec.blockSize', `block size /${blockSize} is larger than the pool ${cidr.toString()}`);
  return {
    kind: 'IPPool',
    name: m.name,
    cidr,
    blockSize,
    disabled: soft(() => optBool(spec, 'disabled', 'spec.'), undefined) ?? false,
    disableBGPExport: soft(() => optBool(spec, 'disableBGPExport', 'spec.'), undefined) ?? false,
    nodeSelector: soft(() => selectorValue(spec, 'nodeSelector', 'spec.'), undefined) ?? ALL,
    ipipMode: soft(() => optEnum(spec, 'ipipMode', 'spec.', ['Never', 'Always', 'CrossSubnet'] as const), undefined) ?? 'Never',
    vxlanMode: soft(() => optEnum(spec, 'vxlanMode', 'spec.', ['Never', 'Always', 'CrossSubnet'] as const), undefined) ?? 'Never',
  };
}

function validateFilterRule(v: unknown, path: string, family: Family): FilterRule {
  const r = asObj(v, path);
  const p = `${path}.`;
  const action = optEnum(r, 'action', p, ['Accept', 'Reject'] as const);
  if (action === undefined) throw new FieldError(`${p}action`, 'is required (Accept or Reject)');
  const matchOperator = optEnum(r, 'matchOperator', p, ['Equal', 'NotEqual', 'In', 'NotIn'] as const);
  const cidr = r.cidr === undefined || r.cidr === null || r.cidr === '' ? undefined : prefixValue(r.cidr, `${p}cidr`);
  if (cidr && cidr.family !== family) throw new FieldError(`${p}cidr`, `${cidr.toString()} is not an IPv${family} CIDR (this is a V${family} rule list)`);
  if (cidr && !matchOperator) throw new FieldError(`${p}matchOperator`, 'is required when cidr is set');
  if (!cidr && matchOperator) throw new FieldError(`${p}cidr`, 'is required when matchOperator is set');
  let prefixLength: FilterRule['prefixLength'];
  if (r.prefixLength !== undefined && r.prefixLength !== null) {
    if (!cidr) throw new FieldError(`${p}prefixLength`, 'needs cidr to be set');
    const pl = asObj(r.prefixLength, `${p}prefixLength`);
    const max = family === 4 ? 32 : 128;
    const mn = optInt(pl, 'min', `${p}prefixLength.`, 0, max);
    const mx = optInt(pl, 'max', `${p}prefixLength.`, 0, max);
    if (mn !== undefined && mx !== undefined && mn > mx) throw new FieldError(`${p}prefixLength`, `min ${mn} is above max ${mx}`);
    prefixLength = { min: mn, max: mx };
  }
  let communities: CommunityValue[] | undefined;
  if (r.communities !== undefined && r.communities !== null) {
    const c = asObj(r.communities, `${p}communities`);
    communities = soft(() => {
      const values = asList(c.values, `${p}communities.values`);
      if (values.length !== 1) throw new FieldError(`${p}communities.values`, `expected exactly one community value, got ${values.length}`);
      return values.map((x, i) => communityValue(x, `${p}communities.values[${i}]`));
    }, undefined);
  }
  const asPathPrefix =
    r.asPathPrefix === undefined ? undefined : softEach(soft(() => asList(r.asPathPrefix, `${p}asPathPrefix`), []), (a, i) => asNumberValue(a, `${p}asPathPrefix[${i}]`));
  const operations = softEach(soft(() => asList(r.operations, `${p}operations`), []), (e, i): FilterOperation => {
    const op = asObj(e, `${p}operations[${i}]`);
    const q = `${p}operations[${i}].`;
    const keys = Object.keys(op);
    if (keys.length !== 1) throw new FieldError(`${p}operations[${i}]`, `expected exactly one of addCommunity, prependASPath, setPriority, got ${keys.length}`);
    if (op.addCommunity !== undefined) return { addCommunity: communityValue(asObj(op.addCommunity, `${q}addCommunity`).value, `${q}addCommunity.value`) };
    if (op.prependASPath !== undefined) {
      const pp = asObj(op.prependASPath, `${q}prependASPath`);
      return { prependASPath: { prefix: asList(pp.prefix, `${q}prependASPath.prefix`).map((a, j) => asNumberValue(a, `${q}prependASPath.prefix[${j}]`)) } };
    }
    if (op.setPriority !== undefined) return { setPriority: intValue(asObj(op.setPriority, `${q}setPriority`).value, `${q}setPriority.value`, 1, 2147483646) };
    throw new FieldError(`${q}${keys[0]}`, `unknown operation (expected addCommunity, prependASPath or setPriority)`);
  });
  if (operations.length > 0 && action !== 'Accept') throw new FieldError(`${p}operations`, 'only allowed when action is Accept');
  return {
    action,
    cidr,
    matchOperator,
    prefixLength,
    source: soft(() => optEnum(r, 'source', p, ['RemotePeers'] as const), undefined),
    interface: soft(() => optStr(r, 'interface', p), undefined),
    peerType: soft(() => optEnum(r, 'peerType', p, ['eBGP', 'iBGP'] as const), undefined),
    communities,
    asPathPrefix,
    priority: soft(() => optInt(r, 'priority', p, 1, 2147483646), undefined),
    operations,
  };
}

function validateBGPFilter(o: Obj, m: Meta): BGPFilter {
  const spec = asObj(o.spec, 'spec');
  const rules = (key: 'exportV4' | 'importV4' | 'exportV6' | 'importV6', family: Family) =>
    softEach(soft(() => asList(spec[key], `spec.${key}`), []), (r, i) => validateFilterRule(r, `spec.${key}[${i}]`, family));
  return { kind: 'BGPFilter', name: m.name, exportV4: rules('exportV4', 4), importV4: rules('importV4', 4), exportV6: rules('exportV6', 6), importV6: rules('importV6', 6) };
}

function validateBlockAffinity(o: Obj, m: Meta): BlockAffinity {
  const spec = asObj(o.spec, 'spec');
  const node = reqStr(spec, 'node', 'spec.');
  if (spec.cidr === undefined) throw new FieldError('spec.cidr', 'is required');
  let state = optEnum<BlockState>(spec, 'state', 'spec.', ['confirmed', 'pending', 'pendingDeletion']) ?? 'confirmed';
  // Calico marks an affinity being released with `deleted: "true"` (a string in the CRD).
  if (spec.deleted === true || spec.deleted === 'true') state = 'pendingDeletion';
  return { kind: 'BlockAffinity', name: m.name, node, cidr: prefixValue(spec.cidr, 'spec.cidr'), state };
}

/** `data` (base64) and `stringData` (plain, wins, as the API server merges it); values as UTF-8 text, never in a message. */
function validateSecret(o: Obj, m: Meta): Secret {
  const data: Record<string, SecretValue> = {};
  for (const [k, v] of Object.entries(asObj(o.data, 'data'))) {
    if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) throw new FieldError(`data.${k}`, 'expected a base64 string (the value is not shown)');
    data[k] = new SecretValue(Buffer.from(v, 'base64').toString('utf8'));
  }
  for (const [k, v] of Object.entries(asObj(o.stringData, 'stringData'))) {
    if (typeof v !== 'string') throw new FieldError(`stringData.${k}`, `expected a string, got ${v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v}`);
    data[k] = new SecretValue(v);
  }
  return { kind: 'Secret', namespace: m.namespace ?? 'default', name: m.name, data: Object.freeze(data) };
}

const VALIDATORS: { [K in ResourceKind]: (o: Obj, m: Meta) => Extract<Resource, { kind: K }> } = {
  Node: validateNode,
  Service: validateService,
  EndpointSlice: validateEndpointSlice,
  BGPConfiguration: validateBGPConfiguration,
  BGPPeer: validateBGPPeer,
  IPPool: validateIPPool,
  BGPFilter: validateBGPFilter,
  BlockAffinity: validateBlockAffinity,
  Secret: validateSecret,
};

export type ValidationResult =
  /** `notes`: warnings and ignored fields of a resource that is still used. */
  | { readonly ok: true; readonly resource: Resource; readonly notes: readonly ManifestIssue[] }
  /** `issue`: the first error; `issues`: every error found, the first included. */
  | { readonly ok: false; readonly issue: ManifestIssue; readonly issues: readonly ManifestIssue[]; readonly key?: string };

/**
 * Validates one parsed object. On failure the issue names the file, kind,
 * namespace/name (when readable) and field path; `key` is the resource's
 * identity when it could be read, so a caller can keep the last valid version.
 */
export function validateObject(raw: unknown, file?: string): ValidationResult {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return only({ severity: 'error', file, message: `expected a resource (a map with apiVersion and kind), got ${typeName(raw)}` });
  }
  const o = raw as Obj;
  const kind = o.kind;
  if (typeof kind !== 'string' || kind === '') return only({ severity: 'error', file, path: 'kind', message: 'is required' });
  let meta: Obj;
  try {
    meta = asObj(o.metadata, 'metadata');
  } catch (e) {
    return only({ severity: 'error', file, kind, path: 'metadata', message: (e as Error).message });
  }
  const name = typeof meta.name === 'string' && meta.name !== '' ? meta.name : undefined;
  const nsRaw = typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : undefined;
  if (!isKnownKind(kind)) return only({ severity: 'ignored', file, kind, name, namespace: nsRaw, message: `kind ${kind} is not used by tsbgp; ignored` });
  const namespace = isNamespaced(kind) ? (nsRaw ?? 'default') : undefined;
  const issueAt = (path: string | undefined, message: string): ManifestIssue => ({ severity: 'error', file, kind, namespace, name, path, message });
  const fail = (path: string | undefined, message: string, withKey = true): ValidationResult => ({
    ...only(issueAt(path, message)),
    key: withKey && name ? resourceKey(kind, name, namespace) : undefined,
  });
  if (name === undefined) return fail('metadata.name', 'is required', false);
  const api = o.apiVersion;
  if (!API_VERSIONS[kind].includes(api as string)) {
    return fail('apiVersion', `expected ${API_VERSIONS[kind].map((v) => JSON.stringify(v)).join(' or ')} for ${kind}, got ${typeName(api)}`);
  }
  const errors: FieldError[] = [];
  let resource: Resource | undefined;
  noted = errors;
  try {
    const m: Meta = {
      name,
      namespace,
      labels: soft(() => labelMap(meta.labels, 'metadata.labels'), {}),
      annotations: soft(() => labelMap(meta.annotations, 'metadata.annotations'), {}),
    };
    resource = VALIDATORS[kind](o, m);
  } catch (e) {
    if (!(e instanceof FieldError)) throw e;
    errors.push(e);
  } finally {
    noted = null;
  }
  if (errors.length === 0 && resource) {
    const notes = unknownFields(kind, o.spec).map((u): ManifestIssue => ({ severity: u.severity, file, kind, namespace, name, path: u.path, message: u.message }));
    return { ok: true, resource, notes };
  }
  // A typo elsewhere in the spec is often the cause ("matchOperater" leaves matchOperator unset).
  const typos = unknownFields(kind, o.spec).filter((u) => u.severity === 'warning');
  const issues = errors.map((e, i) => issueAt(e.path, i === 0 && typos.length ? `${e.message} (also: ${typos.map((u) => `${u.path}: ${u.message}`).join('; ')})` : e.message));
  return { ok: false, issue: issues[0], issues, key: resourceKey(kind, name, namespace) };
}

/** A failure with one issue. */
function only(issue: ManifestIssue): { ok: false; issue: ManifestIssue; issues: readonly ManifestIssue[] } {
  return { ok: false, issue, issues: [issue] };
}

export interface SourcedObject {
  readonly object: unknown;
  readonly file?: string;
}

export interface ValidatedSet {
  readonly resources: Resource[];
  /** Which file each valid resource came from, by resource key. */
  readonly files: Map<string, string | undefined>;
  readonly issues: ManifestIssue[];
  /** Keys of resources whose latest definition is invalid (so a caller may keep an older valid one). */
  readonly invalidKeys: Set<string>;
}

/**
 * Validates many objects: invalid ones are reported and skipped, a second
 * definition of the same kind/namespace/name is an error (the first wins),
 * and each unknown kind is reported once as ignored, as is each Calico field
 * tsbgp does not use (once per kind and field, not per resource).
 */
export function validateAll(objects: Iterable<SourcedObject>): ValidatedSet {
  const resources: Resource[] = [];
  const files = new Map<string, string | undefined>();
  const issues: ManifestIssue[] = [];
  const invalidKeys = new Set<string>();
  const ignoredKinds = new Set<string>();
  for (const { object, file } of objects) {
    const r = validateObject(object, file);
    if (!r.ok) {
      if (r.issue.severity === 'ignored') {
        if (ignoredKinds.has(r.issue.kind ?? '')) continue;
        ignoredKinds.add(r.issue.kind ?? '');
      }
      issues.push(...r.issues);
      if (r.key) invalidKeys.add(r.key);
      continue;
    }
    for (const note of r.notes) {
      if (note.severity === 'ignored') {
        const field = `${note.kind} ${note.path?.replace(/\[\d+\]/g, '[]')}`;
        if (ignoredKinds.has(field)) continue;
        ignoredKinds.add(field);
      }
      issues.push(note);
    }
    const res = r.resource;
    const ns = 'namespace' in res ? res.namespace : undefined;
    const key = resourceKey(res.kind, res.name, ns);
    if (files.has(key)) {
      const first = files.get(key);
      issues.push({ severity: 'error', file, kind: res.kind, namespace: ns, name: res.name, path: 'metadata.name', message: `duplicate name: already defined${first ? ` in ${first}` : ''}; this definition is skipped${first && first !== file ? ' (the files of one layer must not redefine a resource; to apply files in order, give each its own --manifests layer)' : ''}` });
      continue;
    }
    files.set(key, file);
    resources.push(res);
  }
  return { resources, files, issues, invalidKeys };
}
