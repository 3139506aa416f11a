/**
 * The Calico kinds: schema.ts types their fields (string, integer, boolean),
 * enums and ranges, read through `specFields`; written here by hand are only
 * the conversions (CIDRs, addresses, AS numbers, durations, selectors,
 * communities) and the rules across fields (peerSelector against
 * peerIP/asNumber, a filter rule's cidr with its matchOperator, block size
 * by family).
 */
import type { Address, Family, Prefix } from '../net/index.js';
import { CLUSTER_WEIGHTED_ECMP, parseBool } from './service-routing.js';
import {
  CALICO_ANNOTATIONS,
  type BGPConfiguration,
  type BGPFilter,
  type BGPPeer,
  type BlockAffinity,
  type BlockState,
  type CommunityValue,
  type FilterOperation,
  type FilterRule,
  type IPPool,
  type PrefixAdvertisement,
} from './resources.js';
import { ALL } from './selector.js';
import { parseMaxPrefixSpec } from '../speaker/index.js';
import {
  addressValue,
  asList,
  asNumberValue,
  asObj,
  communityValue,
  durationValue,
  FieldError,
  intValue,
  optInt,
  parseCommunityLiteral,
  prefixValue,
  reqStr,
  secretRef,
  selectorValue,
  specFields,
  typeName,
  type Collector,
  type Obj,
} from './validate-fields.js';
import type { Meta } from './validate-core.js';

const CONF = specFields('BGPConfiguration');
const PEER = specFields('BGPPeer');
const POOL = specFields('IPPool');
const RULE = specFields('BGPFilter', 'exportV4', '[]');
const SET_PRIORITY = specFields('BGPFilter', 'exportV4', '[]', 'operations', '[]', 'setPriority');
const AFFINITY = specFields('BlockAffinity');

/**
 * serviceClusterIPs / serviceExternalIPs / serviceLoadBalancerIPs. Calico's
 * CRD makes each entry's `cidr` optional and confd skips an entry without
 * one, advertising the rest: so does tsbgp, with a warning naming the entry.
 */
function cidrList(spec: Obj, key: string, issues: Collector): Prefix[] {
  const out: Prefix[] = [];
  issues.each(
    issues.soft(() => asList(spec[key], `spec.${key}`), []),
    (e, i) => {
      const p = `spec.${key}[${i}]`;
      const entry = asObj(e, p);
      if (entry.cidr === undefined || entry.cidr === null || entry.cidr === '') {
        issues.warn(`${p}.cidr`, 'empty entry (no cidr); ignored, as Calico ignores it');
        return;
      }
      out.push(prefixValue(entry.cidr, `${p}.cidr`));
    },
  );
  return out;
}

/** What a `node.<name>` BGPConfiguration may set, as confd reads it; every other field comes from `default` only. */
const PER_NODE_FIELDS = new Set(['listenPort', 'logSeverityScreen', 'prefixAdvertisements', 'communities']);

export function validateBGPConfiguration(o: Obj, m: Meta, issues: Collector): BGPConfiguration {
  const spec = asObj(o.spec, 'spec');
  if (m.name.startsWith('node.')) {
    for (const f of Object.keys(spec)) {
      if (!PER_NODE_FIELDS.has(f) && spec[f] !== undefined && spec[f] !== null)
        issues.warn(
          `spec.${f}`,
          'ignored in a node-specific BGPConfiguration (Calico reads it from default only; ' +
            'a node may set listenPort, logSeverityScreen, prefixAdvertisements and communities)',
        );
    }
  }
  const communities = issues.each(
    issues.soft(() => asList(spec.communities, 'spec.communities'), []),
    (e, i) => {
      const p = `spec.communities[${i}]`;
      const entry = asObj(e, p);
      const name = reqStr(entry, 'name', `${p}.`);
      if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new FieldError(`${p}.name`, `community names use letters, digits, "-" and "_", got ${JSON.stringify(name)}`);
      return { name, value: communityValue(entry.value, `${p}.value`) };
    },
  );
  const seen = new Set<string>();
  communities.forEach((c, i) => {
    if (seen.has(c.name)) issues.report(`spec.communities[${i}].name`, `duplicate community name ${JSON.stringify(c.name)}`);
    seen.add(c.name);
  });
  const prefixAdvertisements =
    spec.prefixAdvertisements === undefined || spec.prefixAdvertisements === null
      ? undefined
      : issues.each(
          issues.soft(() => asList(spec.prefixAdvertisements, 'spec.prefixAdvertisements'), []),
          (e, i): PrefixAdvertisement => {
            const p = `spec.prefixAdvertisements[${i}]`;
            const entry = asObj(e, p);
            if (entry.cidr === undefined) throw new FieldError(`${p}.cidr`, 'is required');
            const cidr = prefixValue(entry.cidr, `${p}.cidr`);
            const list = issues.each(asList(entry.communities, `${p}.communities`), (c, j) => {
              const cp = `${p}.communities[${j}]`;
              if (typeof c !== 'string' || c === '') throw new FieldError(cp, `expected a community name or "aa:nn" literal, got ${typeName(c)}`);
              const lit = parseCommunityLiteral(c);
              if (lit instanceof Error) throw new FieldError(cp, lit.message);
              if (lit === undefined && m.name === 'default' && !seen.has(c))
                throw new FieldError(cp, `community name ${JSON.stringify(c)} is not defined in spec.communities`);
              return c;
            });
            return { cidr, communities: list };
          },
        );
  const asNumber =
    spec.asNumber === undefined || spec.asNumber === null ? undefined : issues.soft(() => asNumberValue(spec.asNumber, 'spec.asNumber'), undefined);
  return {
    kind: 'BGPConfiguration',
    name: m.name,
    asNumber,
    nodeToNodeMeshEnabled: issues.soft(() => CONF.bool(spec, 'nodeToNodeMeshEnabled', 'spec.'), undefined),
    serviceClusterIPs: cidrList(spec, 'serviceClusterIPs', issues),
    serviceExternalIPs: cidrList(spec, 'serviceExternalIPs', issues),
    serviceLoadBalancerIPs: cidrList(spec, 'serviceLoadBalancerIPs', issues),
    serviceLoadBalancerAggregation:
      issues.soft(() => CONF.enum<BGPConfiguration['serviceLoadBalancerAggregation']>(spec, 'serviceLoadBalancerAggregation', 'spec.'), undefined) ?? 'Enabled',
    communities,
    prefixAdvertisements,
    listenPort: issues.soft(() => CONF.int(spec, 'listenPort', 'spec.'), undefined),
    nodeMeshPassword: issues.soft(() => secretRef(spec.nodeMeshPassword, 'spec.nodeMeshPassword'), undefined),
    nodeMeshMaxRestartTime: issues.soft(() => durationValue(spec, 'nodeMeshMaxRestartTime', 'spec.'), undefined),
    bindMode: issues.soft(() => CONF.enum<NonNullable<BGPConfiguration['bindMode']>>(spec, 'bindMode', 'spec.'), undefined),
    logSeverityScreen: issues.soft(() => CONF.enum<NonNullable<BGPConfiguration['logSeverityScreen']>>(spec, 'logSeverityScreen', 'spec.'), undefined),
    programClusterRoutes: issues.soft(() => CONF.enum<NonNullable<BGPConfiguration['programClusterRoutes']>>(spec, 'programClusterRoutes', 'spec.'), undefined),
    ipv4NormalRoutePriority: issues.soft(() => CONF.int(spec, 'ipv4NormalRoutePriority', 'spec.'), undefined),
    ipv6NormalRoutePriority: issues.soft(() => CONF.int(spec, 'ipv6NormalRoutePriority', 'spec.'), undefined),
    ignoredInterfaces: issues.each(
      issues.soft(() => asList(spec.ignoredInterfaces, 'spec.ignoredInterfaces'), []),
      (f, i) => {
        if (typeof f !== 'string' || f === '')
          throw new FieldError(`spec.ignoredInterfaces[${i}]`, `expected an interface name or pattern, got ${typeName(f)}`);
        return f;
      },
    ),
    ...weightedEcmpAnnotation(m, issues),
  };
}

/** tsbgp.io/weighted-ecmp on a BGPConfiguration: "true" or "false" (src/kubernetes/service-routing.ts). */
function weightedEcmpAnnotation(m: Meta, issues: Collector): { weightedEcmp?: boolean } {
  const text = m.annotations[CLUSTER_WEIGHTED_ECMP];
  if (text === undefined) return {};
  const v = parseBool(text);
  if (v === undefined) {
    issues.report(`metadata.annotations.${CLUSTER_WEIGHTED_ECMP}`, `expected "true" or "false", got ${JSON.stringify(text)}`);
    return {};
  }
  return { weightedEcmp: v };
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

export function validateBGPPeer(o: Obj, m: Meta, issues: Collector): BGPPeer {
  const spec = asObj(o.spec, 'spec');
  // A field in error reads as null below: set, but not checked against the others (its own error says enough).
  const node = issues.soft(() => PEER.str(spec, 'node', 'spec.') || undefined, null);
  const nodeSelector = issues.soft(() => selectorValue(spec, 'nodeSelector', 'spec.'), null);
  if (node && nodeSelector) issues.report('spec.nodeSelector', 'cannot be set together with spec.node');
  const peerSelector = issues.soft(() => selectorValue(spec, 'peerSelector', 'spec.'), null);
  const peerIPText = issues.soft(() => PEER.str(spec, 'peerIP', 'spec.') || undefined, null);
  const asNumber = spec.asNumber === undefined || spec.asNumber === null ? undefined : issues.soft(() => asNumberValue(spec.asNumber, 'spec.asNumber'), null);
  const localWorkloadSelector = issues.soft(() => selectorValue(spec, 'localWorkloadSelector', 'spec.'), null);
  if (localWorkloadSelector) {
    // Calico's CRD rules: the peers are the selected pods, in the AS the BGPPeer gives.
    if (peerIPText !== undefined) throw new FieldError('spec.peerIP', 'must be empty when spec.localWorkloadSelector is set');
    if (peerSelector) throw new FieldError('spec.peerSelector', 'must be empty when spec.localWorkloadSelector is set');
    if (asNumber === undefined) throw new FieldError('spec.asNumber', "is required when spec.localWorkloadSelector is set (the workloads' AS)");
    // confd builds a workload peer from the address, asNumber, localASNumber and filters only: the rest is left out, as Calico leaves it out.
    for (const f of [
      'password',
      'sourceAddress',
      'nextHopMode',
      'keepOriginalNextHop',
      'maxRestartTime',
      'keepaliveTime',
      'numAllowedLocalASNumbers',
      'ttlSecurity',
      'reachableBy',
      'failureDetectionMode',
    ] as const) {
      if (spec[f] !== undefined && spec[f] !== null && spec[f] !== 'None' && spec[f] !== false)
        issues.warn(
          `spec.${f}`,
          'ignored with spec.localWorkloadSelector, as Calico ignores it: a workload peering takes only asNumber, localASNumber and filters',
        );
    }
  } else if (peerSelector) {
    if (peerIPText !== undefined) throw new FieldError('spec.peerIP', 'cannot be set together with spec.peerSelector');
    if (asNumber !== undefined)
      throw new FieldError('spec.asNumber', 'cannot be set together with spec.peerSelector (the remote AS comes from the selected node)');
  } else if (peerSelector === undefined && localWorkloadSelector === undefined) {
    // Without asNumber the peer is taken to be in the cluster's AS (BGPConfiguration default), as Calico does.
    if (peerIPText === undefined) throw new FieldError('spec.peerIP', 'is required when spec.peerSelector is not set');
  }
  if (peerSelector) {
    // Calico's API takes these with a peerSelector and confd leaves them out (each node speaks its own AS): so does tsbgp, saying so.
    for (const f of ['localASNumber', 'numAllowedLocalASNumbers'] as const) {
      if (spec[f] !== undefined && spec[f] !== null)
        issues.warn(`spec.${f}`, "ignored with spec.peerSelector, as Calico ignores it: a peering between nodes uses each node's own AS");
    }
  }
  const nextHopMode = issues.soft(() => PEER.enum<NonNullable<BGPPeer['nextHopMode']>>(spec, 'nextHopMode', 'spec.'), null);
  const keepOriginalNextHop = issues.soft(() => PEER.bool(spec, 'keepOriginalNextHop', 'spec.'), undefined) ?? false;
  if (keepOriginalNextHop && nextHopMode && nextHopMode !== 'Keep') {
    throw new FieldError(
      'spec.keepOriginalNextHop',
      `contradicts spec.nextHopMode ${nextHopMode} (keepOriginalNextHop is the deprecated form of nextHopMode Keep)`,
    );
  }
  const filters = issues.each(
    issues.soft(() => asList(spec.filters, 'spec.filters'), []),
    (f, i) => {
      if (typeof f !== 'string' || f === '') throw new FieldError(`spec.filters[${i}]`, `expected a BGPFilter name, got ${typeName(f)}`);
      return f;
    },
  );
  const reachable = issues.soft(() => PEER.str(spec, 'reachableBy', 'spec.'), undefined);
  const failureDetectionMode = issues.soft(() => PEER.enum<BGPPeer['failureDetectionMode']>(spec, 'failureDetectionMode', 'spec.'), undefined) ?? 'None';
  // BFD timers: tsbgp.io/bfd-* annotations named after MetalLB's BFDProfile (Calico's BGPPeer CRD drops unknown spec fields).
  const annInt = (key: string, min: number, max: number, dflt: number): number =>
    issues.soft(() => {
      const v = m.annotations[key];
      if (v === undefined) return dflt;
      if (!/^\d+$/.test(v.trim())) throw new FieldError(`metadata.annotations.${key}`, `expected a whole number, got ${JSON.stringify(v)}`);
      return intValue(Number(v), `metadata.annotations.${key}`, min, max);
    }, dflt);
  const passive = m.annotations[CALICO_ANNOTATIONS.bfdPassiveMode];
  if (passive !== undefined && passive !== 'true' && passive !== 'false')
    issues.report(`metadata.annotations.${CALICO_ANNOTATIONS.bfdPassiveMode}`, `expected "true" or "false", got ${JSON.stringify(passive)}`);
  const bfd = {
    receiveInterval: annInt(CALICO_ANNOTATIONS.bfdReceiveInterval, 10, 60_000, 300),
    transmitInterval: annInt(CALICO_ANNOTATIONS.bfdTransmitInterval, 10, 60_000, 300),
    detectMultiplier: annInt(CALICO_ANNOTATIONS.bfdDetectMultiplier, 2, 255, 3),
    passiveMode: passive === 'true',
  };
  // Max-prefix: the tsbgp.io/max-prefixes annotation, the text of the agent's --max-prefixes (Calico's BGPPeer has no such field).
  const mpText = m.annotations[CALICO_ANNOTATIONS.maxPrefixes];
  const maxPrefixes =
    mpText === undefined
      ? undefined
      : issues.soft(() => {
          try {
            return parseMaxPrefixSpec(mpText);
          } catch (e) {
            throw new FieldError(`metadata.annotations.${CALICO_ANNOTATIONS.maxPrefixes}`, (e as Error).message);
          }
        }, undefined);
  // Long-lived graceful restart (RFC 9494): Calico OSS's BGPPeer has only maxRestartTime, so an annotation, a duration like it.
  const llKey = CALICO_ANNOTATIONS.longLivedStaleTime;
  const longLivedStaleTime =
    m.annotations[llKey] === undefined
      ? undefined
      : issues.soft(() => {
          const secs = durationValue(m.annotations, llKey, 'metadata.annotations.');
          if (secs === undefined || !Number.isInteger(secs) || secs < 1 || secs > 0xffffff)
            throw new FieldError(
              `metadata.annotations.${llKey}`,
              `must be whole seconds from 1s to 16777215s (24 bits, RFC 9494), got ${JSON.stringify(m.annotations[llKey])}`,
            );
          return secs;
        }, undefined);
  const peerIP = peerIPText ? issues.soft(() => peerIPValue(peerIPText, 'spec.peerIP'), undefined) : undefined;
  const reachableBy = reachable ? issues.soft(() => addressValue(reachable, 'spec.reachableBy'), undefined) : undefined;
  // As Calico: reachableBy needs a peerIP (its CRD rule), of the same family (confd skips the peer otherwise).
  if (reachable && peerIPText === undefined && !localWorkloadSelector) issues.report('spec.reachableBy', 'needs spec.peerIP (the gateway toward that address)');
  if (reachableBy && peerIP && reachableBy.family !== peerIP.address.family)
    issues.report('spec.reachableBy', `${reachableBy} is IPv${reachableBy.family} but spec.peerIP ${peerIP.address} is IPv${peerIP.address.family}`);
  return {
    kind: 'BGPPeer',
    name: m.name,
    labels: m.labels,
    ...(maxPrefixes !== undefined ? { maxPrefixes } : {}),
    ...(longLivedStaleTime !== undefined ? { longLivedStaleTime } : {}),
    node: node ?? undefined,
    nodeSelector: nodeSelector ?? undefined,
    peerIP,
    asNumber: asNumber ?? undefined,
    peerSelector: peerSelector ?? undefined,
    localWorkloadSelector: localWorkloadSelector ?? undefined,
    localASNumber:
      spec.localASNumber === undefined || spec.localASNumber === null
        ? undefined
        : issues.soft(() => asNumberValue(spec.localASNumber, 'spec.localASNumber'), undefined),
    password: issues.soft(() => secretRef(spec.password, 'spec.password'), undefined),
    sourceAddress: issues.soft(() => PEER.enum<BGPPeer['sourceAddress']>(spec, 'sourceAddress', 'spec.'), undefined) ?? 'UseNodeIP',
    nextHopMode: nextHopMode ?? undefined,
    keepOriginalNextHop,
    maxRestartTime: issues.soft(() => durationValue(spec, 'maxRestartTime', 'spec.'), undefined),
    keepaliveTime: issues.soft(() => durationValue(spec, 'keepaliveTime', 'spec.'), undefined),
    numAllowedLocalASNumbers: issues.soft(() => PEER.int(spec, 'numAllowedLocalASNumbers', 'spec.'), undefined),
    ttlSecurity: issues.soft(() => PEER.int(spec, 'ttlSecurity', 'spec.'), undefined),
    filters,
    reachableBy,
    failureDetectionMode,
    bfd,
    reversePeering: issues.soft(() => PEER.enum<BGPPeer['reversePeering']>(spec, 'reversePeering', 'spec.'), undefined) ?? 'Auto',
  };
}

export function validateIPPool(o: Obj, m: Meta, issues: Collector): IPPool {
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
    disabled: issues.soft(() => POOL.bool(spec, 'disabled', 'spec.'), undefined) ?? false,
    disableBGPExport: issues.soft(() => POOL.bool(spec, 'disableBGPExport', 'spec.'), undefined) ?? false,
    nodeSelector: issues.soft(() => selectorValue(spec, 'nodeSelector', 'spec.'), undefined) ?? ALL,
    ipipMode: issues.soft(() => POOL.enum<IPPool['ipipMode']>(spec, 'ipipMode', 'spec.'), undefined) ?? 'Never',
    vxlanMode: issues.soft(() => POOL.enum<IPPool['vxlanMode']>(spec, 'vxlanMode', 'spec.'), undefined) ?? 'Never',
  };
}

/** Calico's check of a rule's `interface`: an interface name or a glob of one (`*`), at most 15 characters. */
function filterInterface(v: string | undefined, path: string): string | undefined {
  if (v === undefined || v === '') return undefined;
  if (v !== '*' && !/^[a-zA-Z0-9_.*-]{1,15}$/.test(v))
    throw new FieldError(
      path,
      `expected an interface name or a glob of one (letters, digits, "_", ".", "-", "*"; at most 15 characters), got ${JSON.stringify(v)}`,
    );
  return v;
}

function validateFilterRule(v: unknown, path: string, family: Family, issues: Collector): FilterRule {
  const r = asObj(v, path);
  const p = `${path}.`;
  const action = RULE.enum<FilterRule['action']>(r, 'action', p);
  if (action === undefined) throw new FieldError(`${p}action`, 'is required (Accept or Reject)');
  const matchOperator = RULE.enum<NonNullable<FilterRule['matchOperator']>>(r, 'matchOperator', p);
  const cidr = r.cidr === undefined || r.cidr === null || r.cidr === '' ? undefined : prefixValue(r.cidr, `${p}cidr`);
  if (cidr && cidr.family !== family) throw new FieldError(`${p}cidr`, `${cidr.toString()} is not an IPv${family} CIDR (this is a V${family} rule list)`);
  if (cidr && !matchOperator) throw new FieldError(`${p}matchOperator`, 'is required when cidr is set');
  if (!cidr && matchOperator) throw new FieldError(`${p}cidr`, 'is required when matchOperator is set');
  let prefixLength: FilterRule['prefixLength'];
  if (r.prefixLength !== undefined && r.prefixLength !== null) {
    if (!cidr) throw new FieldError(`${p}prefixLength`, 'needs cidr to be set');
    // Calico would write `net = [ cidr{min,max} ]`, which compares a prefix with a prefix set.
    if (matchOperator === 'Equal' || matchOperator === 'NotEqual')
      throw new FieldError(`${p}prefixLength`, `applies to matchOperator In or NotIn, not ${matchOperator}`);
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
    communities = issues.soft(() => {
      const values = asList(c.values, `${p}communities.values`);
      if (values.length !== 1) throw new FieldError(`${p}communities.values`, `expected exactly one community value, got ${values.length}`);
      return values.map((x, i) => communityValue(x, `${p}communities.values[${i}]`));
    }, undefined);
  }
  const asPathPrefix =
    r.asPathPrefix === undefined
      ? undefined
      : issues.each(
          issues.soft(() => asList(r.asPathPrefix, `${p}asPathPrefix`), []),
          (a, i) => asNumberValue(a, `${p}asPathPrefix[${i}]`),
        );
  const operations = issues.each(
    issues.soft(() => asList(r.operations, `${p}operations`), []),
    (e, i): FilterOperation => {
      const op = asObj(e, `${p}operations[${i}]`);
      const q = `${p}operations[${i}].`;
      const keys = Object.keys(op);
      if (keys.length !== 1)
        throw new FieldError(`${p}operations[${i}]`, `expected exactly one of addCommunity, prependASPath, setPriority, got ${keys.length}`);
      if (op.addCommunity !== undefined) return { addCommunity: communityValue(asObj(op.addCommunity, `${q}addCommunity`).value, `${q}addCommunity.value`) };
      if (op.prependASPath !== undefined) {
        const pp = asObj(op.prependASPath, `${q}prependASPath`);
        return { prependASPath: { prefix: asList(pp.prefix, `${q}prependASPath.prefix`).map((a, j) => asNumberValue(a, `${q}prependASPath.prefix[${j}]`)) } };
      }
      if (op.setPriority !== undefined)
        return { setPriority: intValue(asObj(op.setPriority, `${q}setPriority`).value, `${q}setPriority.value`, ...SET_PRIORITY.range('value')) };
      throw new FieldError(`${q}${keys[0]}`, `unknown operation (expected addCommunity, prependASPath or setPriority)`);
    },
  );
  if (operations.length > 0 && action !== 'Accept') throw new FieldError(`${p}operations`, 'only allowed when action is Accept');
  return {
    action,
    cidr,
    matchOperator,
    prefixLength,
    source: issues.soft(() => RULE.enum<NonNullable<FilterRule['source']>>(r, 'source', p), undefined),
    interface: issues.soft(() => filterInterface(RULE.str(r, 'interface', p), `${p}interface`), undefined),
    peerType: issues.soft(() => RULE.enum<NonNullable<FilterRule['peerType']>>(r, 'peerType', p), undefined),
    communities,
    asPathPrefix,
    priority: issues.soft(() => RULE.int(r, 'priority', p), undefined),
    operations,
  };
}

export function validateBGPFilter(o: Obj, m: Meta, issues: Collector): BGPFilter {
  const spec = asObj(o.spec, 'spec');
  const rules = (key: 'exportV4' | 'importV4' | 'exportV6' | 'importV6', family: Family) =>
    issues.each(
      issues.soft(() => asList(spec[key], `spec.${key}`), []),
      (r, i) => validateFilterRule(r, `spec.${key}[${i}]`, family, issues),
    );
  return {
    kind: 'BGPFilter',
    name: m.name,
    exportV4: rules('exportV4', 4),
    importV4: rules('importV4', 4),
    exportV6: rules('exportV6', 6),
    importV6: rules('importV6', 6),
  };
}

export function validateBlockAffinity(o: Obj, m: Meta, issues: Collector): BlockAffinity {
  const spec = asObj(o.spec, 'spec');
  const node = reqStr(spec, 'node', 'spec.');
  if (spec.cidr === undefined) throw new FieldError('spec.cidr', 'is required');
  let state = AFFINITY.enum<BlockState>(spec, 'state', 'spec.') ?? 'confirmed';
  // Calico marks an affinity being released with `deleted: "true"` (a string in the CRD).
  if (spec.deleted === true || spec.deleted === 'true') state = 'pendingDeletion';
  return { kind: 'BlockAffinity', name: m.name, node, cidr: prefixValue(spec.cidr, 'spec.cidr'), state };
}
