import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { WATCHED_RBAC, watchedResources } from '../../src/agent/sources/api-source.js';
import { NODE_STATUS_RBAC } from '../../src/agent/sources/node-status-reporter.js';

const read = (p: string) => parse(readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8')) as Record<string, any>;

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** Every (group, resource, verb) a rule list grants. */
function grants(rules: Rule[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules) for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) out.add(`${g}|${res}|${v}`);
  return out;
}

describe('deploy/clusterrole.yaml', () => {
  const role = read('deploy/clusterrole.yaml');
  const rules = role.rules as Rule[];

  it('grants get/list/watch on every watched resource, create/get/patch on events, what CalicoNodeStatus needs, and nothing else', () => {
    const want = new Set<string>();
    for (const w of WATCHED_RBAC) for (const v of ['get', 'list', 'watch']) want.add(`${w.apiGroup}|${w.resource}|${v}`);
    for (const r of NODE_STATUS_RBAC) for (const v of r.verbs) want.add(`${r.apiGroup}|${r.resource}|${v}`);
    want.add('|events|create');
    want.add('|events|get');
    want.add('|events|patch');
    expect([...grants(rules)].sort()).toEqual([...want].sort());
  });

  it('has no wildcards, resourceNames or nonResourceURLs', () => {
    const text = JSON.stringify(rules);
    expect(text).not.toContain('*');
    expect(rules.every((r) => Object.keys(r).sort().join() === 'apiGroups,resources,verbs')).toBe(true);
  });

  it('lets the agent write only the status of a CalicoNodeStatus, never the request itself', () => {
    const g = grants(rules);
    for (const group of ['crd.projectcalico.org', 'projectcalico.org']) {
      expect(g.has(`${group}|caliconodestatuses/status|patch`)).toBe(true);
      expect(g.has(`${group}|caliconodestatuses|watch`)).toBe(true);
      for (const v of ['create', 'update', 'patch', 'delete']) expect(g.has(`${group}|caliconodestatuses|${v}`)).toBe(false);
    }
  });

  it('covers both Calico APIs the source may pick', () => {
    const g = grants(rules);
    for (const api of ['crd.projectcalico.org/v1', 'projectcalico.org/v3'] as const) {
      for (const w of watchedResources(api)) expect(g.has(`${w.group}|${w.plural}|watch`), `${w.group}/${w.plural}`).toBe(true);
    }
  });

  it('is bound to the service account the DaemonSet runs as', () => {
    const binding = read('deploy/clusterrolebinding.yaml');
    const ds = read('deploy/daemonset.yaml');
    const sa = read('deploy/serviceaccount.yaml');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata.name });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace }]);
    expect(ds.spec.template.spec.serviceAccountName).toBe(sa.metadata.name);
  });
});

describe('deploy/daemonset.yaml', () => {
  const ds = read('deploy/daemonset.yaml');
  const pod = ds.spec.template.spec;
  const c = pod.containers[0];

  it('runs on the host network as non-root with only NET_BIND_SERVICE (port 179) and NET_ADMIN (kernel routes, --kernel=on) and a read-only root', () => {
    expect(pod.hostNetwork).toBe(true);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(c.securityContext.capabilities).toEqual({ drop: ['ALL'], add: ['NET_BIND_SERVICE', 'NET_ADMIN'] });
    expect(c.args).toContain('--kernel=on');
    expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(c.securityContext.privileged).toBeUndefined();
  });

  it('probes /healthz and /readyz on the metrics port and gets NODENAME from spec.nodeName', () => {
    const metrics = c.ports.find((p: { name: string }) => p.name === 'metrics');
    expect(metrics.containerPort).toBeGreaterThan(1024);
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(c.env).toContainEqual({ name: 'NODENAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } });
  });

  it('is listed in the kustomization with the other base files', () => {
    const k = read('deploy/kustomization.yaml');
    expect([...k.resources].sort()).toEqual(['clusterrole.yaml', 'clusterrolebinding.yaml', 'daemonset.yaml', 'secrets-role.yaml', 'serviceaccount.yaml']);
  });
});

describe('deploy/secrets-role.yaml', () => {
  const docs = parseAllDocuments(readFileSync(new URL('../../deploy/secrets-role.yaml', import.meta.url), 'utf8')).map(
    (d) => d.toJSON() as Record<string, any>,
  );
  const role = docs.find((d) => d.kind === 'Role')!;
  const binding = docs.find((d) => d.kind === 'RoleBinding')!;

  it("reads only named Secrets in kube-system (the agent's NAMESPACE default), bound to the agent's service account", () => {
    const sa = read('deploy/serviceaccount.yaml');
    expect(role.metadata.namespace).toBe('kube-system');
    expect(role.rules).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: ['bgp-passwords'], verbs: ['get', 'list', 'watch'] }]);
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata.name });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace }]);
    expect(read('deploy/kustomization.yaml').resources).toContain('secrets-role.yaml');
  });

  it('the cluster role grants no Secrets', () => {
    expect(JSON.stringify(read('deploy/clusterrole.yaml').rules)).not.toContain('secrets');
  });
});
