/**
 * The cases of Calico's confd test corpus (projectcalico/calico
 * `confd/tests`) and how each is run there, read from its *_test.go files:
 * which input files are applied, in which order, which changes are made
 * between steps, which node renders, and whether the standard block
 * affinities are created. Nothing of Calico's is copied here: the inputs
 * and expected files are read from a Calico checkout at run time.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';

export type Obj = Record<string, any>;

/** Reads files of a Calico checkout, or of a bare mirror through `git show`. */
export class CalicoTree {
  private readonly bare: boolean;
  private listing?: string[];

  constructor(readonly root: string) {
    if (!existsSync(root)) throw new Error(`--calico ${root}: no such directory`);
    this.bare = !existsSync(join(root, 'confd')) && (existsSync(join(root, 'HEAD')) || statSync(root).isDirectory());
    if (!this.bare) return;
    try {
      execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { stdio: 'pipe' });
    } catch {
      throw new Error(`--calico ${root}: neither a Calico checkout (no confd/) nor a git repository`);
    }
  }

  read(path: string): string | undefined {
    if (!this.bare) {
      const p = join(this.root, path);
      return existsSync(p) ? readFileSync(p, 'utf8') : undefined;
    }
    try {
      return execFileSync('git', ['-C', this.root, 'show', `HEAD:${path}`], { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 }).toString();
    } catch {
      return undefined;
    }
  }

  /** Every file path under `dir`. */
  list(dir: string): string[] {
    if (this.bare) {
      this.listing ??= execFileSync('git', ['-C', this.root, 'ls-tree', '-r', '--name-only', 'HEAD', 'confd/tests'], { maxBuffer: 64 << 20 })
        .toString()
        .split('\n')
        .filter(Boolean);
      return this.listing.filter((p) => p.startsWith(`${dir}/`));
    }
    const out = execFileSync('find', [join(this.root, dir), '-type', 'f'], { maxBuffer: 64 << 20 })
      .toString()
      .split('\n')
      .filter(Boolean);
    return out.map((p) => p.slice(this.root.length + 1));
  }
}

export const MOCK = 'confd/tests/mock_data/calicoctl';
export const GOLDEN = 'confd/tests/compiled_templates';

/** One rendering to compare: the resources in force, the node that renders, and the expected files' folder. */
export interface Case {
  readonly name: string;
  readonly node: string;
  readonly objects: readonly Obj[];
  /** Something of the case tsbgp cannot be given. */
  readonly note?: string;
  /** The environment the test gives confd (`envVars`, e.g. CALICO_ROUTER_ID). */
  readonly env: Readonly<Record<string, string>>;
  /** Felix's endpoint-status files the test writes (`withEndpointStatus`), by file name: local workload peering. */
  readonly endpointStatus: Readonly<Record<string, string>>;
}

export function yamlDocs(text: string): Obj[] {
  return (yaml.loadAll(text) as unknown[]).filter((d): d is Obj => d !== null && typeof d === 'object');
}

function keyOf(o: Obj): string {
  return `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
}

/** Applies documents over a set of objects (create or update by kind and name, as the tests' upsert does). */
function upsert(into: Map<string, Obj>, docs: readonly Obj[]): void {
  for (const d of docs) into.set(keyOf(d), d);
}

// The affinities every mesh-style case gets (helpers_test.go): the block, and whether it is confirmed ('' is implicitly so).
const STANDARD_AFFINITIES: readonly [string, string][] = [
  ['10.0.0.0/30', ''],
  ['10.1.0.0/24', ''],
  ['10.2.0.1/32', ''],
  ['192.168.221.192/26', ''],
  ['192.168.221.64/26', 'confirmed'],
  ['192.168.221.0/26', 'pending'],
];

function affinities(node: string): Obj[] {
  return STANDARD_AFFINITIES.map(([cidr, state]) => ({
    apiVersion: 'projectcalico.org/v3',
    kind: 'BlockAffinity',
    metadata: { name: `${node}-${cidr.replace('/', '-').replaceAll('.', '-')}` },
    spec: { node, cidr, ...(state !== '' ? { state } : {}) },
  }));
}

function secret(name: string, data: Record<string, string>): Obj {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'kube-system' }, stringData: data };
}

interface Recipe {
  /** Input folders under mock_data, applied in order (each with its kubectl-input.yaml). */
  inputs: string[];
  node?: string;
  noAffinities?: boolean;
  /** Changes made after the inputs, before rendering. */
  edit?: (objs: Map<string, Obj>) => void;
  note?: string;
}

function editSpec(kind: string, name: string, f: (spec: Obj) => void): (objs: Map<string, Obj>) => void {
  return (objs) => {
    const o = objs.get(`${kind}//${name}`);
    if (!o) throw new Error(`no ${kind} ${name} to edit`);
    const copy = structuredClone(o);
    copy.spec ??= {};
    f(copy.spec);
    objs.set(keyOf(copy), copy);
  };
}

function setSecrets(list: [string, Record<string, string>][]): (objs: Map<string, Obj>) => void {
  return (objs) => {
    for (const [n, d] of list) objs.set(`Secret/kube-system/${n}`, secret(n, d));
  };
}

function deadlock(objs: Map<string, Obj>): void {
  objs.set('BGPConfiguration//default', {
    apiVersion: 'projectcalico.org/v3',
    kind: 'BGPConfiguration',
    metadata: { name: 'default' },
    spec: { nodeToNodeMeshEnabled: false },
  });
  objs.set('Secret/kube-system/my-secrets-1', secret('my-secrets-1', { a: 'password-a' }));
  for (let i = 1; i <= 99; i++) {
    const n = `dl-node${i}`;
    objs.set(`Node//${n}`, {
      apiVersion: 'projectcalico.org/v3',
      kind: 'Node',
      metadata: { name: n, labels: { node: 'yes' } },
      spec: { bgp: { ipv4Address: `10.24.0.${i}/24` } },
    });
    objs.set(`BGPPeer//dl-bgppeer-${i}`, {
      apiVersion: 'projectcalico.org/v3',
      kind: 'BGPPeer',
      metadata: { name: `dl-bgppeer-${i}` },
      spec: { node: n, peerIP: '10.24.0.2', asNumber: 64512, password: { secretKeyRef: { name: 'my-secrets-1', key: 'a' } } },
    });
  }
}

/** The cases whose rendering is not "apply <folder>/input.yaml on kube-master" (daemon_test.go). */
function specialRecipes(): Record<string, Recipe> {
  const sa = { inputs: ['sourceaddr_gracefulrestart'], node: 'node1', noAffinities: true };
  const pw = { inputs: ['password'], node: 'node1', noAffinities: true };
  const mp = { inputs: ['mesh_password'] };
  const pcr = (v: string): Recipe => ({ inputs: ['mesh/restart-time'], edit: editSpec('BGPConfiguration', 'default', (s) => (s.programClusterRoutes = v)) });
  return {
    'sourceaddr_gracefulrestart/step1': sa,
    'sourceaddr_gracefulrestart/step2': { ...sa, edit: editSpec('BGPPeer', 'bgppeer-1', (s) => (s.sourceAddress = 'None')) },
    'sourceaddr_gracefulrestart/step3': {
      ...sa,
      edit: editSpec('BGPPeer', 'bgppeer-1', (s) => {
        s.sourceAddress = 'None';
        s.maxRestartTime = '10s';
      }),
    },
    'mesh/password/step1': mp,
    'mesh/password/step2': { ...mp, edit: setSecrets([['my-secrets-1', { a: 'password-a' }]]) },
    'mesh/password/step3': { ...mp, edit: setSecrets([['my-secrets-1', { a: 'new-password-a' }]]) },
    'password/step1': pw,
    'password/step2': { ...pw, edit: setSecrets([['my-secrets-1', { b: 'password-b' }]]) },
    'password/step3': {
      ...pw,
      edit: setSecrets([
        ['my-secrets-1', { b: 'password-b', a: 'password-a' }],
        ['my-secrets-2', { c: 'password-c' }],
      ]),
    },
    'password/step4': { ...pw, edit: setSecrets([['my-secrets-1', { b: 'password-b', a: 'password-a' }]]) },
    'password/step5': { ...pw, edit: setSecrets([['my-secrets-1', { b: 'new-password-b', a: 'new-password-a' }]]) },
    'password/step6': { ...pw, edit: setSecrets([['my-secrets-1', { b: 'new-password-b' }]]) },
    'password-deadlock': { inputs: [], node: 'dl-node1', noAffinities: true, edit: deadlock },
    'bgpfilter/node_mesh/priority1': { inputs: ['bgpfilter/node_mesh'], noAffinities: true },
    'bgpfilter/node_mesh/priority2': {
      inputs: ['bgpfilter/node_mesh'],
      noAffinities: true,
      edit: editSpec('BGPConfiguration', 'default', (s) => (s.ipv4NormalRoutePriority = 5000)),
    },
    'bgpfilter/node_mesh/priority3': {
      inputs: ['bgpfilter/node_mesh'],
      noAffinities: true,
      edit: editSpec('BGPConfiguration', 'default', (s) => {
        s.ipv4NormalRoutePriority = 5000;
        s.ipv6NormalRoutePriority = 80;
      }),
    },
    'bgpfilter/filter_deletion/step1': { inputs: ['bgpfilter/filter_deletion'] },
    'bgpfilter/filter_deletion/step2': { inputs: ['bgpfilter/filter_deletion'], edit: (objs) => void objs.delete('BGPFilter//test-filter') },
    'mesh/restart-time/pcr-disabled': pcr('Disabled'),
    'mesh/restart-time/pcr-enabled': pcr('Enabled'),
    'mesh/restart-time/pcr-ipip-only': pcr('EnabledIPIPOnly'),
    'explicit_peering/local_bgp_peer': { inputs: ['local_bgp_peer'] },
  };
}

/** The Go test files of confd's corpus. */
function testFiles(tree: CalicoTree): string[] {
  return tree
    .list('confd/tests')
    .filter((p) => /^confd\/tests\/[^/]+_test\.go$/.test(p))
    .map((p) => tree.read(p) ?? '');
}

/** Go `"key": "value"` (or a raw string: "key": `value`) pairs of a map literal's body. */
function goStringMap(body: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of body.matchAll(/"([^"]+)"\s*:\s*(?:"((?:[^"\\]|\\.)*)"|`([^`]*)`)/g))
    out[m[1]] = m[2] !== undefined ? (JSON.parse(`"${m[2]}"`) as string) : m[3];
  return out;
}

/** The body of the `map[string]string{...}` that starts at `from` (braces balanced, strings skipped). */
function mapBody(text: string, from: number): string {
  const open = text.indexOf('{', from);
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '`' || c === '"') {
      const end = c === '`' ? text.indexOf('`', i + 1) : text.slice(i + 1).search(/(?<!\\)"/) + i + 1;
      i = end;
    } else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(open + 1, i);
  }
  throw new Error('unbalanced map literal in a confd test file');
}

/**
 * What the Go tests give confd besides the input files, read from them at
 * run time: a table row's `envVars` (by its `goldenDir`), and a test's
 * `withEndpointStatus` (by the expected output it checks).
 */
function testExtras(tree: CalicoTree): { env: Map<string, Record<string, string>>; endpointStatus: Map<string, Record<string, string>> } {
  const env = new Map<string, Record<string, string>>();
  const endpointStatus = new Map<string, Record<string, string>>();
  for (const text of testFiles(tree)) {
    for (const m of text.matchAll(/goldenDir:\s*"([^"]+)"[^\n]*?envVars:\s*map\[string\]string/g))
      env.set(m[1], goStringMap(mapBody(text, m.index! + m[0].length)));
    for (const fn of text.split(/\nfunc /)) {
      const at = fn.indexOf('withEndpointStatus(map[string]string');
      if (at < 0) continue;
      const files = goStringMap(mapBody(fn, at + 'withEndpointStatus(map[string]string'.length));
      for (const m of fn.matchAll(/expectOutput\("([^"]+)"\)/g)) endpointStatus.set(m[1], files);
    }
  }
  return { env, endpointStatus };
}

/** Every case with expected output (a folder holding bird.cfg under compiled_templates), in name order. */
export function corpusCases(tree: CalicoTree): Case[] {
  const extras = testExtras(tree);
  const golden = tree
    .list(GOLDEN)
    .filter((p) => p.endsWith('/bird.cfg'))
    .map((p) => p.slice(GOLDEN.length + 1, -'/bird.cfg'.length))
    .sort();
  const special = specialRecipes();
  const out: Case[] = [];
  for (const name of golden) {
    let recipe = special[name];
    if (!recipe) {
      if (tree.read(`${MOCK}/${name}/input.yaml`) === undefined) throw new Error(`case ${name}: no ${MOCK}/${name}/input.yaml and no recipe`);
      // A step folder (x/step2) is applied over its parent's inputs.
      const parent = name.replace(/\/step\d+$/, '');
      recipe = { inputs: parent !== name ? [parent, name] : [name] };
    }
    const node = recipe.node ?? 'kube-master';
    const objs = new Map<string, Obj>();
    if (!recipe.noAffinities) upsert(objs, affinities('kube-master'));
    for (const dir of recipe.inputs) {
      const text = tree.read(`${MOCK}/${dir}/input.yaml`);
      if (text === undefined) throw new Error(`case ${name}: no ${MOCK}/${dir}/input.yaml`);
      upsert(objs, yamlDocs(text));
      const kubectl = tree.read(`${MOCK}/${dir}/kubectl-input.yaml`);
      if (kubectl !== undefined) upsert(objs, yamlDocs(kubectl));
    }
    recipe.edit?.(objs);
    out.push({
      name,
      node,
      objects: [...objs.values()],
      env: extras.env.get(name) ?? {},
      endpointStatus: extras.endpointStatus.get(name) ?? {},
      ...(recipe.note ? { note: recipe.note } : {}),
    });
  }
  return out;
}

/** The expected configuration files of a case, by file name (absent files omitted). */
export function expectedFiles(tree: CalicoTree, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of ['bird.cfg', 'bird6.cfg', 'bird_aggr.cfg', 'bird6_aggr.cfg', 'bird_ipam.cfg', 'bird6_ipam.cfg']) {
    const t = tree.read(`${GOLDEN}/${name}/${f}`);
    if (t !== undefined) out[f] = t;
  }
  return out;
}

/**
 * A label value as Calico's tests load it: their YAML reader follows YAML 1.1,
 * where a bare `yes`, `on` or `y` is the boolean true (and `no`, `off`, `n`
 * false), which then lands in the string-valued label as "true" or "false"
 * (so `route-reflector: yes` matches `route-reflector == 'true'`).
 */
export function labelValue(v: unknown): string {
  if (typeof v === 'string') {
    if (/^(y|Y|yes|Yes|YES|on|On|ON)$/.test(v)) return 'true';
    if (/^(n|N|no|No|NO|off|Off|OFF)$/.test(v)) return 'false';
  }
  return String(v);
}

/**
 * Calico's inputs as manifests tsbgp reads: a projectcalico.org/v3 Node
 * becomes a Kubernetes Node carrying Calico's annotations (as calico-node
 * writes them in a Kubernetes datastore) and the labels the tests give it;
 * Services and EndpointSlices land in `default` without a status, as the
 * tests create them; everything else is passed as it is.
 */
export function toManifests(objs: readonly Obj[]): Obj[] {
  return objs.map((raw) => {
    const o = raw.metadata?.labels
      ? { ...raw, metadata: { ...raw.metadata, labels: Object.fromEntries(Object.entries(raw.metadata.labels).map(([k, v]) => [k, labelValue(v)])) } }
      : raw;
    if (o.kind === 'Node' && o.apiVersion === 'projectcalico.org/v3') {
      const bgp = o.spec?.bgp ?? {};
      const annotations: Record<string, string> = { ...(o.metadata?.annotations ?? {}) };
      if (bgp.ipv4Address) annotations['projectcalico.org/IPv4Address'] = bgp.ipv4Address;
      if (bgp.ipv6Address) annotations['projectcalico.org/IPv6Address'] = bgp.ipv6Address;
      if (bgp.asNumber !== undefined) annotations['projectcalico.org/ASNumber'] = String(bgp.asNumber);
      if (bgp.routeReflectorClusterID) annotations['projectcalico.org/RouteReflectorClusterID'] = bgp.routeReflectorClusterID;
      const name = o.metadata.name;
      return {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          labels: { 'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': name, ...(o.metadata?.labels ?? {}) },
          annotations,
        },
        spec: {},
        status: { addresses: bgp.ipv4Address ? [{ type: 'InternalIP', address: String(bgp.ipv4Address).split('/')[0] }] : [] },
      };
    }
    if (o.kind === 'Service' || o.kind === 'EndpointSlice' || o.kind === 'Endpoints') {
      // A create writes no status (the tests' own note: their Services' load-balancer status never reaches the API server).
      const { status: _status, ...rest } = o;
      return { ...rest, metadata: { ...o.metadata, namespace: o.metadata?.namespace ?? 'default' } };
    }
    return o;
  });
}
