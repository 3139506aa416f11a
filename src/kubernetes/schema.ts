/**
 * The spec schema of the Calico resources tsbgp reads: the fields it knows,
 * their types, enums, ranges and plurals. One description serves every end: scripts/gen-crds.ts
 * renders it as CustomResourceDefinitions (deploy/crds/), validate-calico.ts
 * reads each field with its type, enum and range (validate-fields.ts
 * `specFields`), the API source takes its plurals, and validate.ts walks
 * a manifest against it to report fields it does not know (a typo such as
 * `serviceClusterIP` must not pass unnoticed). The validator keeps by hand
 * only conversions (CIDRs, AS numbers, durations…) and rules across fields.
 */

export type Field =
  | { readonly t: 'string'; readonly enum?: readonly string[]; readonly pattern?: string; readonly doc?: string }
  | { readonly t: 'integer'; readonly min?: number; readonly max?: number; readonly doc?: string }
  | { readonly t: 'boolean'; readonly doc?: string }
  | { readonly t: 'intOrString'; readonly doc?: string }
  | { readonly t: 'array'; readonly items: Field; readonly minItems?: number; readonly maxItems?: number; readonly doc?: string }
  | {
      readonly t: 'object';
      readonly props: Readonly<Record<string, Field>>;
      readonly required?: readonly string[];
      readonly maxProperties?: number;
      readonly minProperties?: number;
      readonly doc?: string;
    };

const str = (doc?: string): Field => ({ t: 'string', doc });
const oneOf = (values: readonly string[], doc?: string): Field => ({ t: 'string', enum: values, doc });
const int = (min: number, max: number, doc?: string): Field => ({ t: 'integer', min, max, doc });
const bool = (doc?: string): Field => ({ t: 'boolean', doc });
const list = (items: Field, doc?: string): Field => ({ t: 'array', items, doc });
const obj = (props: Record<string, Field>, required?: string[], doc?: string): Field => ({ t: 'object', props, required, doc });
const asn: Field = { t: 'intOrString', doc: 'AS number: 1 to 4294967295, or asdot text "x.y".' };
const duration: Field = { t: 'string', pattern: '^(0|([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$', doc: 'Go duration, e.g. "120s".' };
const cidr = str('CIDR, e.g. 10.0.0.0/16 (no host bits).');
const selector = str('Calico selector expression, e.g. "rack == \'a\'".');
const secretRef = obj({ secretKeyRef: obj({ name: str(), key: str() }, ['name', 'key']) }, ['secretKeyRef']);
const community = str('Community "aa:nn" or large community "aa:nn:mm".');
// Each entry's cidr is optional, as in Calico's CRD: an entry without one is ignored (with a warning).
const cidrList = list(obj({ cidr }));

const filterRule = obj(
  {
    action: oneOf(['Accept', 'Reject']),
    cidr,
    matchOperator: oneOf(['Equal', 'NotEqual', 'In', 'NotIn']),
    prefixLength: obj({ min: int(0, 128), max: int(0, 128) }),
    source: oneOf(['RemotePeers']),
    interface: { t: 'string', pattern: '^[a-zA-Z0-9_.*-]{1,15}$', doc: 'The interface the route goes out of: a name or a glob ("eth*").' },
    peerType: oneOf(['eBGP', 'iBGP']),
    communities: obj({ values: { t: 'array', items: community, minItems: 1, maxItems: 1 } }),
    asPathPrefix: list(asn),
    priority: int(1, 2147483646),
    operations: list({
      t: 'object',
      props: {
        addCommunity: obj({ value: community }),
        prependASPath: obj({ prefix: list(asn) }),
        setPriority: obj({ value: int(1, 2147483646) }),
      },
      minProperties: 1,
      maxProperties: 1,
    }),
  },
  ['action'],
);

export interface Kind {
  readonly kind: string;
  readonly plural: string;
  readonly spec: Field & { t: 'object' };
}

export const KINDS: readonly Kind[] = [
  {
    kind: 'BGPConfiguration',
    plural: 'bgpconfigurations',
    spec: obj({
      asNumber: asn,
      nodeToNodeMeshEnabled: bool(),
      serviceClusterIPs: cidrList,
      serviceExternalIPs: cidrList,
      serviceLoadBalancerIPs: cidrList,
      serviceLoadBalancerAggregation: oneOf(['Enabled', 'Disabled']),
      communities: list(obj({ name: { t: 'string', pattern: '^[A-Za-z0-9_-]+$' }, value: community }, ['name', 'value'])),
      prefixAdvertisements: list(obj({ cidr, communities: list(str('Community name from spec.communities, or a literal.')) }, ['cidr'])),
      listenPort: int(1, 65535),
      nodeMeshPassword: secretRef,
      nodeMeshMaxRestartTime: duration,
      bindMode: oneOf(['None', 'NodeIP']),
      logSeverityScreen: oneOf(['Trace', 'Debug', 'Info', 'Warning', 'Error', 'Fatal']),
      programClusterRoutes: oneOf(
        ['Enabled', 'Disabled', 'EnabledIPIPOnly', 'EnabledNoEncapOnly'],
        "Which IP pools' routes tsbgp programs into the kernel (default Enabled).",
      ),
      ipv4NormalRoutePriority: int(
        1,
        2147483646,
        "Felix's metric for IPv4 workload routes (default 1024): originated routes carry LOCAL_PREF 2147483647 minus it, " +
          'and learned routes go into the kernel with metric 2147483647 minus their LOCAL_PREF.',
      ),
      ipv6NormalRoutePriority: int(1, 2147483646, 'The same for IPv6 (default 1024).'),
      ignoredInterfaces: list(str('Interface name or pattern (* and ?) whose connected networks tsbgp does not advertise.')),
    }) as Kind['spec'],
  },
  {
    kind: 'BGPPeer',
    plural: 'bgppeers',
    spec: obj({
      node: str(),
      nodeSelector: selector,
      peerIP: str('ip, ip:port or [ipv6]:port.'),
      asNumber: asn,
      peerSelector: selector,
      localASNumber: asn,
      password: secretRef,
      sourceAddress: oneOf(['UseNodeIP', 'None']),
      nextHopMode: oneOf(['Auto', 'Self', 'Keep']),
      keepOriginalNextHop: bool(),
      maxRestartTime: duration,
      keepaliveTime: duration,
      numAllowedLocalASNumbers: int(0, 10),
      ttlSecurity: int(0, 255),
      filters: list(str('BGPFilter name.')),
      reachableBy: str('IP address.'),
      failureDetectionMode: oneOf(['None', 'BFDIfDirectlyConnected']),
      reversePeering: oneOf(['Auto', 'Manual']),
      localWorkloadSelector: selector,
    }) as Kind['spec'],
  },
  {
    kind: 'IPPool',
    plural: 'ippools',
    spec: obj(
      {
        cidr,
        blockSize: int(20, 128, '20 to 32 for IPv4, 116 to 128 for IPv6.'),
        disabled: bool(),
        disableBGPExport: bool(),
        nodeSelector: selector,
        ipipMode: oneOf(
          ['Never', 'Always', 'CrossSubnet'],
          'IPIP encapsulation: routes of an Always pool go via tunl0; CrossSubnet only toward other subnets.',
        ),
        vxlanMode: oneOf(['Never', 'Always', 'CrossSubnet'], 'VXLAN encapsulation: Felix programs these routes, tsbgp does not.'),
      },
      ['cidr'],
    ) as Kind['spec'],
  },
  {
    kind: 'BGPFilter',
    plural: 'bgpfilters',
    spec: obj({ exportV4: list(filterRule), importV4: list(filterRule), exportV6: list(filterRule), importV6: list(filterRule) }) as Kind['spec'],
  },
  {
    kind: 'BlockAffinity',
    plural: 'blockaffinities',
    spec: obj({ node: str(), cidr, state: oneOf(['confirmed', 'pending', 'pendingDeletion']), deleted: str('"true" while the block is released.') }, [
      'node',
      'cidr',
    ]) as Kind['spec'],
  },
];

/**
 * Fields Calico defines but tsbgp does not act on, by kind: `unused` ones belong
 * to other parts of Calico (the dataplane, IPAM, BIRD's own knobs) and are noted
 * as ignored; `unsupported` ones change BGP behaviour in Calico, so a manifest
 * that sets them gets a warning saying tsbgp does not do that — unless it sets
 * Calico's `default`, which is what tsbgp does anyway.
 */
export const CALICO_ONLY: Readonly<
  Record<string, Readonly<Record<string, { readonly kind: 'unused' | 'unsupported'; readonly why: string; readonly default?: string }>>>
> = {
  BGPConfiguration: {
    localWorkloadPeeringIPV4: {
      kind: 'unused',
      why: "Felix puts it on the host side of each peering workload's interface; tsbgp waits for the workload to connect and answers on the address it dialled",
    },
    localWorkloadPeeringIPV6: {
      kind: 'unused',
      why: "Felix puts it on the host side of each peering workload's interface; tsbgp waits for the workload to connect and answers on the address it dialled",
    },
  },
  BGPPeer: {
    restartMode: { kind: 'unsupported', why: 'only RFC 4724 graceful restart is supported (no long-lived graceful restart)', default: 'GracefulRestart' },
    birdGatewayMode: { kind: 'unused', why: 'a BIRD kernel-protocol setting' },
  },
  IPPool: {
    natOutgoing: { kind: 'unused', why: 'a dataplane setting' },
    'nat-outgoing': { kind: 'unused', why: 'a dataplane setting' },
    ipip: { kind: 'unused', why: 'a dataplane setting' },
    allowedUses: { kind: 'unused', why: 'an IPAM setting' },
    assignmentMode: { kind: 'unused', why: 'an IPAM setting' },
    namespaceSelector: { kind: 'unused', why: 'an IPAM setting' },
    disableIPFragmentation: { kind: 'unused', why: 'a dataplane setting' },
  },
  BlockAffinity: {
    type: { kind: 'unused', why: 'an IPAM setting' },
  },
};

/** A field of a manifest the schema does not know, or knows as Calico's only. */
export interface UnknownField {
  /** Dotted path, e.g. `spec.exportV4[0].actoin`. */
  readonly path: string;
  readonly severity: 'warning' | 'ignored';
  readonly message: string;
}

/** Fields of `spec` (and nested maps) that the kind's schema does not name. */
export function unknownFields(kindName: string, spec: unknown): UnknownField[] {
  const kind = KINDS.find((k) => k.kind === kindName);
  if (!kind) return [];
  const out: UnknownField[] = [];
  walk(kind.spec, spec, 'spec', out, CALICO_ONLY[kindName] ?? {});
  return out;
}

function walk(f: Field, v: unknown, path: string, out: UnknownField[], calicoOnly: (typeof CALICO_ONLY)[string]): void {
  if (f.t === 'array') {
    if (Array.isArray(v)) v.forEach((item, i) => walk(f.items, item, `${path}[${i}]`, out, {}));
    return;
  }
  if (f.t !== 'object' || v === null || typeof v !== 'object' || Array.isArray(v)) return;
  for (const [key, value] of Object.entries(v)) {
    const sub = f.props[key];
    if (sub) {
      walk(sub, value, `${path}.${key}`, out, {});
      continue;
    }
    const known = Object.hasOwn(calicoOnly, key) ? calicoOnly[key] : undefined;
    if (known?.default !== undefined && value === known.default) continue;
    if (known) {
      out.push({ path: `${path}.${key}`, severity: known.kind === 'unused' ? 'ignored' : 'warning', message: `not used by tsbgp (${known.why}); ignored` });
      continue;
    }
    const guess = closest(key, Object.keys(f.props));
    out.push({ path: `${path}.${key}`, severity: 'warning', message: `unknown field; ignored${guess ? ` (did you mean ${guess}?)` : ''}` });
  }
}

/** The known name a typo most likely meant: same letters ignoring case, or at most two edits away. */
export function closest(key: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const name of names) {
    const d = name.toLowerCase() === key.toLowerCase() ? 0 : editDistance(key, name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}
