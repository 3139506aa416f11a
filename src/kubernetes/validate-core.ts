/** The Kubernetes kinds the planner reads: Node, Service, EndpointSlice, Secret. */
import { Address, type Family } from '../net/index.js';
import type { Endpoint, EndpointAddressType, EndpointSlice, InterfaceAddress, Labels, Node, Secret, Service, ServiceType } from './resources.js';
import { SecretValue } from './secrets.js';
import { compact } from './compact.js';
import { CALICO_ANNOTATIONS, SERVICE_NAME_LABEL } from './resources.js';
import {
  addressValue,
  asList,
  asNumberValue,
  asObj,
  FieldError,
  optBool,
  optEnum,
  optStr,
  prefixValue,
  typeName,
  type Collector,
  type Obj,
} from './validate-fields.js';

/** What every validator gets from metadata. */
export interface Meta {
  name: string;
  namespace?: string;
  labels: Labels;
  annotations: Labels;
}

export function validateNode(o: Obj, m: Meta, issues: Collector): Node {
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
  issues.each(
    issues.soft(() => asList(status.addresses, 'status.addresses'), []),
    (e, i) => {
      const p = `status.addresses[${i}]`;
      const entry = asObj(e, p);
      if (optStr(entry, 'type', `${p}.`) === 'InternalIP') internalIPs.push(addressValue(entry.address, `${p}.address`));
    },
  );
  const podCIDRs = issues.each(
    issues.soft(() => asList(spec.podCIDRs, 'spec.podCIDRs'), []),
    (c, i) => prefixValue(c, `spec.podCIDRs[${i}]`),
  );
  if (podCIDRs.length === 0 && typeof spec.podCIDR === 'string' && spec.podCIDR !== '')
    issues.soft(() => podCIDRs.push(prefixValue(spec.podCIDR, 'spec.podCIDR')), 0);
  const asText = a[CALICO_ANNOTATIONS.asNumber];
  const rr = a[CALICO_ANNOTATIONS.rrClusterId];
  if (rr !== undefined && rr !== '') {
    let v4 = false;
    try {
      v4 = Address.parse(rr).family === 4;
    } catch {
      // not an address at all: reported below
    }
    if (!v4)
      issues.report(
        `metadata.annotations.${CALICO_ANNOTATIONS.rrClusterId}`,
        `a route reflector cluster ID is a dotted-quad IPv4 value, got ${JSON.stringify(rr)}`,
      );
  }
  return {
    kind: 'Node',
    name: m.name,
    labels: m.labels,
    annotations: m.annotations,
    asNumber:
      asText === undefined || asText === ''
        ? undefined
        : issues.soft(() => asNumberValue(asText, `metadata.annotations.${CALICO_ANNOTATIONS.asNumber}`), undefined),
    ipv4Address: issues.soft(() => ifAddr(CALICO_ANNOTATIONS.ipv4Address, 4), undefined),
    ipv6Address: issues.soft(() => ifAddr(CALICO_ANNOTATIONS.ipv6Address, 6), undefined),
    routeReflectorClusterId: rr === '' ? undefined : rr,
    internalIPs: compact(internalIPs),
    podCIDRs: compact(podCIDRs),
    ...(spec.unschedulable === true ? { unschedulable: true } : {}),
  };
}

const SERVICE_TYPES: readonly ServiceType[] = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];

export function validateService(o: Obj, m: Meta, issues: Collector): Service {
  const spec = asObj(o.spec, 'spec');
  const status = asObj(o.status, 'status');
  const type = issues.soft(() => optEnum(spec, 'type', 'spec.', SERVICE_TYPES), undefined) ?? 'ClusterIP';
  let headless = false;
  let clusterIPs: Address[] = [];
  const listed = asList(spec.clusterIPs, 'spec.clusterIPs');
  const single = optStr(spec, 'clusterIP', 'spec.');
  const texts: { v: unknown; path: string }[] =
    listed.length > 0 ? listed.map((v, i) => ({ v, path: `spec.clusterIPs[${i}]` })) : single ? [{ v: single, path: 'spec.clusterIP' }] : [];
  if (texts.some((t) => t.v === 'None')) headless = true;
  else
    clusterIPs = issues.each(
      texts.filter((t) => t.v !== ''),
      (t) => addressValue(t.v, t.path),
    );
  if (single && listed.length > 0 && single !== 'None' && single !== listed[0]) {
    issues.report('spec.clusterIP', `must equal spec.clusterIPs[0] (${JSON.stringify(listed[0])}), got ${JSON.stringify(single)}`);
  }
  const externalIPs = issues.each(
    issues.soft(() => asList(spec.externalIPs, 'spec.externalIPs'), []),
    (v, i) => addressValue(v, `spec.externalIPs[${i}]`),
  );
  const lb = issues.soft(() => asObj(status.loadBalancer, 'status.loadBalancer'), {});
  const loadBalancerIngressIPs: Address[] = [];
  issues.each(
    issues.soft(() => asList(lb.ingress, 'status.loadBalancer.ingress'), []),
    (e, i) => {
      const p = `status.loadBalancer.ingress[${i}]`;
      const entry = asObj(e, p);
      const ip = optStr(entry, 'ip', `${p}.`);
      if (ip) loadBalancerIngressIPs.push(addressValue(ip, `${p}.ip`));
    },
  );
  const specLb = issues.soft(() => optStr(spec, 'loadBalancerIP', 'spec.'), undefined);
  const ipFamilies = issues.each(
    issues.soft(() => asList(spec.ipFamilies, 'spec.ipFamilies'), []),
    (f, i): Family => {
      if (f === 'IPv4') return 4;
      if (f === 'IPv6') return 6;
      throw new FieldError(`spec.ipFamilies[${i}]`, `unknown value ${JSON.stringify(f)} (expected one of IPv4, IPv6)`);
    },
  );
  if (ipFamilies.length === 0) {
    for (const a of clusterIPs) if (!ipFamilies.includes(a.family)) ipFamilies.push(a.family);
    if (ipFamilies.length === 0) ipFamilies.push(4);
  }
  return {
    kind: 'Service',
    namespace: m.namespace ?? 'default',
    name: m.name,
    labels: m.labels,
    annotations: m.annotations,
    type,
    headless,
    clusterIPs: compact(clusterIPs),
    externalIPs: compact(externalIPs),
    loadBalancerIngressIPs: compact(loadBalancerIngressIPs),
    specLoadBalancerIP: specLb ? issues.soft(() => addressValue(specLb, 'spec.loadBalancerIP'), undefined) : undefined,
    externalTrafficPolicy: issues.soft(() => optEnum(spec, 'externalTrafficPolicy', 'spec.', ['Cluster', 'Local'] as const), undefined) ?? 'Cluster',
    ipFamilies: familiesOf(ipFamilies),
  };
}

/**
 * Endpoints are the same few (node, readiness) pairs over and over: one
 * frozen object per pair, for up to MAX_SHARED_NODES node names (beyond
 * that, a fresh object each, so the table stays bounded).
 */
const sharedEndpoints = new Map<string | undefined, readonly [Endpoint, Endpoint]>();
const MAX_SHARED_NODES = 10_000;
function endpointOf(nodeName: string | undefined, ready: boolean): Endpoint {
  let pair = sharedEndpoints.get(nodeName);
  if (!pair) {
    if (sharedEndpoints.size >= MAX_SHARED_NODES) return { nodeName, ready };
    pair = [Object.freeze({ nodeName, ready: false }), Object.freeze({ nodeName, ready: true })];
    sharedEndpoints.set(nodeName, pair);
  }
  return pair[ready ? 1 : 0];
}

/** The four lists of IP families a Service can have, shared by every Service. */
const FAMILY_LISTS: readonly (readonly Family[])[] = [Object.freeze([4]), Object.freeze([6]), Object.freeze([4, 6]), Object.freeze([6, 4])];
function familiesOf(list: readonly Family[]): readonly Family[] {
  return FAMILY_LISTS.find((l) => l.length === list.length && l.every((f, i) => f === list[i])) ?? compact(list);
}

export function validateEndpointSlice(o: Obj, m: Meta, issues: Collector): EndpointSlice {
  const addressType = optEnum<EndpointAddressType>(o, 'addressType', '', ['IPv4', 'IPv6', 'FQDN']);
  if (addressType === undefined) throw new FieldError('addressType', 'is required (IPv4, IPv6 or FQDN)');
  const endpoints = issues.each(asList(o.endpoints, 'endpoints'), (e, i): Endpoint => {
    const p = `endpoints[${i}]`;
    const entry = asObj(e, p);
    const cond = asObj(entry.conditions, `${p}.conditions`);
    return endpointOf(optStr(entry, 'nodeName', `${p}.`), optBool(cond, 'ready', `${p}.conditions.`) !== false);
  });
  const svc = m.labels[SERVICE_NAME_LABEL];
  return {
    kind: 'EndpointSlice',
    namespace: m.namespace ?? 'default',
    name: m.name,
    serviceName: svc === '' ? undefined : svc,
    addressType,
    endpoints: compact(endpoints),
  };
}

/** `data` (base64) and `stringData` (plain, wins, as the API server merges it); values as UTF-8 text, never in a message. */
export function validateSecret(o: Obj, m: Meta): Secret {
  const data: Record<string, SecretValue> = {};
  for (const [k, v] of Object.entries(asObj(o.data, 'data'))) {
    if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0)
      throw new FieldError(`data.${k}`, 'expected a base64 string (the value is not shown)');
    data[k] = new SecretValue(Buffer.from(v, 'base64').toString('utf8'));
  }
  for (const [k, v] of Object.entries(asObj(o.stringData, 'stringData'))) {
    if (typeof v !== 'string') throw new FieldError(`stringData.${k}`, `expected a string, got ${typeName(v)}`);
    data[k] = new SecretValue(v);
  }
  return { kind: 'Secret', namespace: m.namespace ?? 'default', name: m.name, data: Object.freeze(data) };
}
