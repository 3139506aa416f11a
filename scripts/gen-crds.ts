/**
 * Generates deploy/crds/: CustomResourceDefinitions for the Calico resources
 * tsbgp reads (crd.projectcalico.org/v1), from the schema description below,
 * which mirrors what src/kubernetes/validate.ts accepts. The API server then
 * rejects obviously wrong objects early; the validator stays the authority
 * (cross-field rules, CIDR host bits, selectors). `spec` keeps unknown fields,
 * so Calico's own fields survive when these CRDs stand in for Calico's.
 *
 *   node --import tsx scripts/gen-crds.ts          # rewrite deploy/crds/
 *   node --import tsx scripts/gen-crds.ts --check  # exit 1 if out of date
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

type Field =
  | { readonly t: 'string'; readonly enum?: readonly string[]; readonly pattern?: string; readonly doc?: string }
  | { readonly t: 'integer'; readonly min?: number; readonly max?: number; readonly doc?: string }
  | { readonly t: 'boolean'; readonly doc?: string }
  | { readonly t: 'intOrString'; readonly doc?: string }
  | { readonly t: 'array'; readonly items: Field; readonly minItems?: number; readonly maxItems?: number; readonly doc?: string }
  | { readonly t: 'object'; readonly props: Readonly<Record<string, Field>>; readonly required?: readonly string[]; readonly maxProperties?: number; readonly minProperties?: number; readonly doc?: string };

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
const cidrList = list(obj({ cidr }, ['cidr']));

const filterRule = obj(
  {
    action: oneOf(['Accept', 'Reject']),
    cidr,
    matchOperator: oneOf(['Equal', 'NotEqual', 'In', 'NotIn']),
    prefixLength: obj({ min: int(0, 128), max: int(0, 128) }),
    source: oneOf(['RemotePeers']),
    interface: str(),
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

interface Kind {
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
    spec: obj({ node: str(), cidr, state: oneOf(['confirmed', 'pending', 'pendingDeletion']), deleted: str('"true" while the block is released.') }, ['node', 'cidr']) as Kind['spec'],
  },
];

export const GROUP = 'crd.projectcalico.org';

function openApi(f: Field): Record<string, unknown> {
  const d = f.doc ? { description: f.doc } : {};
  switch (f.t) {
    case 'string':
      return { type: 'string', ...d, ...(f.enum ? { enum: [...f.enum] } : {}), ...(f.pattern ? { pattern: f.pattern } : {}) };
    case 'integer':
      return { type: 'integer', ...d, ...(f.min !== undefined ? { minimum: f.min } : {}), ...(f.max !== undefined ? { maximum: f.max } : {}) };
    case 'boolean':
      return { type: 'boolean', ...d };
    case 'intOrString':
      return { 'x-kubernetes-int-or-string': true, ...d };
    case 'array':
      return { type: 'array', ...d, items: openApi(f.items), ...(f.minItems !== undefined ? { minItems: f.minItems } : {}), ...(f.maxItems !== undefined ? { maxItems: f.maxItems } : {}) };
    case 'object':
      return {
        type: 'object',
        ...d,
        properties: Object.fromEntries(Object.entries(f.props).map(([k, v]) => [k, openApi(v)])),
        ...(f.required?.length ? { required: [...f.required] } : {}),
        ...(f.minProperties !== undefined ? { minProperties: f.minProperties } : {}),
        ...(f.maxProperties !== undefined ? { maxProperties: f.maxProperties } : {}),
      };
  }
}

export function crdFor(k: Kind): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${k.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: k.kind, listKind: `${k.kind}List`, plural: k.plural, singular: k.kind.toLowerCase() },
      scope: 'Cluster',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: { ...openApi(k.spec), 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  };
}

const HEADER = '# Generated by scripts/gen-crds.ts from the schema description there; do not edit.\n';

/** File name → content, for every file in deploy/crds/. */
export function renderCrdFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const k of KINDS) files.set(`${GROUP}_${k.plural}.yaml`, HEADER + stringify(crdFor(k), { lineWidth: 0 }));
  const kustomization = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: [...files.keys()] };
  files.set('kustomization.yaml', HEADER + stringify(kustomization));
  return files;
}

export const CRD_DIR = fileURLToPath(new URL('../deploy/crds/', import.meta.url));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const [name, text] of renderCrdFiles()) {
    const path = join(CRD_DIR, name);
    if (check) {
      let old = '';
      try {
        old = readFileSync(path, 'utf8');
      } catch {
        /* missing */
      }
      if (old !== text) {
        stale++;
        process.stderr.write(`out of date: ${path}\n`);
      }
    } else writeFileSync(path, text);
  }
  process.exit(stale > 0 ? 1 : 0);
}
