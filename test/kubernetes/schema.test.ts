import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planJson } from '../../src/agent/views.js';
import { KnownObjects } from '../../src/kubernetes/api-known.js';
import { plan, stateOf } from '../../src/kubernetes/index.js';
import { loadManifests } from '../../src/agent/sources/manifest-files.js';
import { CALICO_ONLY, KINDS, unknownFields, type Field } from '../../src/kubernetes/schema.js';
import { validateAll, validateObject } from '../../src/kubernetes/validate.js';

const calico = (kind: string, name: string, spec: unknown) => ({ apiVersion: 'projectcalico.org/v3', kind, metadata: { name }, spec });

function notesOf(raw: unknown) {
  const r = validateObject(raw, 'm.yaml');
  if (!r.ok) throw new Error(`expected a valid resource, got ${r.issue.message}`);
  return r.notes;
}

describe('unknown fields of Calico resources are reported, not silently dropped', () => {
  it('a typo in BGPConfiguration is a warning that suggests the known field; the resource still applies', () => {
    const notes = notesOf(
      calico('BGPConfiguration', 'default', { asNumber: 65000, serviceClusterIP: [{ cidr: '198.18.0.0/16' }], NodeToNodeMeshEnabled: false }),
    );
    expect(notes).toEqual([
      {
        severity: 'warning',
        file: 'm.yaml',
        kind: 'BGPConfiguration',
        namespace: undefined,
        name: 'default',
        path: 'spec.serviceClusterIP',
        message: 'unknown field; ignored (did you mean serviceClusterIPs?)',
      },
      {
        severity: 'warning',
        file: 'm.yaml',
        kind: 'BGPConfiguration',
        namespace: undefined,
        name: 'default',
        path: 'spec.NodeToNodeMeshEnabled',
        message: 'unknown field; ignored (did you mean nodeToNodeMeshEnabled?)',
      },
    ]);
  });

  it('nested fields: a BGPFilter rule and a service range entry', () => {
    const notes = notesOf(calico('BGPFilter', 'f', { exportV4: [{ action: 'Accept' }, { action: 'Reject', peertype: 'eBGP' }] }));
    expect(notes.map((n) => [n.path, n.message])).toEqual([['spec.exportV4[1].peertype', 'unknown field; ignored (did you mean peerType?)']]);
    const cfg = notesOf(calico('BGPConfiguration', 'default', { serviceExternalIPs: [{ cidr: '203.0.113.0/24', comment: 'lab' }] }));
    expect(cfg.map((n) => [n.path, n.message])).toEqual([['spec.serviceExternalIPs[0].comment', 'unknown field; ignored']]);
  });

  it('a Calico feature tsbgp lacks is a warning; another component’s field is only noted as ignored', () => {
    const notes = notesOf(
      calico('BGPPeer', 'tor', { peerIP: '192.0.2.1', asNumber: 65000, restartMode: 'LongLivedGracefulRestart', birdGatewayMode: 'Recursive' }),
    );
    expect(notes.map((n) => [n.severity, n.path])).toEqual([
      ['warning', 'spec.restartMode'],
      ['ignored', 'spec.birdGatewayMode'],
    ]);
    expect(notes[0].message).toContain('no long-lived graceful restart');
    const conf = notesOf(calico('BGPConfiguration', 'default', { localWorkloadPeeringIPV4: '169.254.0.179' }));
    // Felix's setting (the address on the workload's host-side interface): noted, no warning.
    expect(conf.map((n) => [n.severity, n.path])).toEqual([['ignored', 'spec.localWorkloadPeeringIPV4']]);
    expect(conf[0].message).toContain('Felix puts it on the host side');
    // BFD (Calico Enterprise's failureDetectionMode) is supported: no note at all
    expect(notesOf(calico('BGPPeer', 'tor', { peerIP: '192.0.2.1', asNumber: 65000, failureDetectionMode: 'BFDIfDirectlyConnected' }))).toEqual([]);
  });

  it('setting a Calico feature to its default (what tsbgp does anyway) is no warning', () => {
    expect(notesOf(calico('BGPPeer', 'tor', { peerIP: '192.0.2.1', asNumber: 65000, restartMode: 'GracefulRestart', failureDetectionMode: 'None' }))).toEqual(
      [],
    );
    expect(
      notesOf(calico('BGPPeer', 'tor', { peerIP: '192.0.2.1', asNumber: 65000, restartMode: 'LongLivedGracefulRestart' })).map((n) => [n.severity, n.path]),
    ).toEqual([['warning', 'spec.restartMode']]);
  });

  it('Kubernetes kinds are not checked (their objects come with many fields tsbgp has no use for)', () => {
    expect(
      notesOf({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 's', namespace: 'd' },
        spec: { clusterIP: '198.18.0.1', sessionAffinity: 'None', ports: [{ port: 80 }] },
      }),
    ).toEqual([]);
  });

  it('every field of the schema is known: an object using all of them gets no note (property)', () => {
    // An arbitrary subset of each kind's fields, values irrelevant to this check.
    for (const kind of KINDS) {
      const names = Object.keys(kind.spec.props);
      fc.assert(
        fc.property(fc.subarray(names), (subset) => {
          const spec = Object.fromEntries(subset.map((k) => [k, sample(kind.spec.props[k])]));
          expect(unknownFields(kind.kind, spec)).toEqual([]);
        }),
        { numRuns: 50 },
      );
    }
  });

  it('a field the schema does not name is always reported, with the path it stands at (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...KINDS), fc.stringMatching(/^[a-z][A-Za-z]{2,15}$/), (kind, key) => {
        fc.pre(!Object.hasOwn(kind.spec.props, key));
        const found = unknownFields(kind.kind, { [key]: 1 });
        const known = CALICO_ONLY[kind.kind]?.[key];
        fc.pre(known?.default === undefined);
        expect(found).toHaveLength(1);
        expect(found[0].severity).toBe(known?.kind === 'unused' ? 'ignored' : 'warning');
        expect(found[0].path).toBe(`spec.${key}`);
      }),
    );
  });

  it('a validation error mentions a typo elsewhere in the spec that likely caused it', () => {
    const r = validateObject(calico('BGPFilter', 'f', { exportV4: [{ action: 'Accept', cidr: '10.0.0.0/8', matchOperater: 'In' }] }), 'm.yaml');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issue.path).toBe('spec.exportV4[0].matchOperator');
    expect(r.issue.message).toBe('is required when cidr is set (also: spec.exportV4[0].matchOperater: unknown field; ignored (did you mean matchOperator?))');
  });

  it('validateAll keeps warnings per resource and notes an ignored Calico field once per kind and field', () => {
    const pool = (name: string, cidr: string) => calico('IPPool', name, { cidr, ipipMode: 'Never', natOutgoing: true, disableIPFragmentation: false });
    const v = validateAll(
      [pool('a', '198.19.0.0/16'), pool('b', '198.20.0.0/16'), calico('IPPool', 'c', { cidr: '198.21.0.0/16', blocksize: 26 })].map((object) => ({
        object,
        file: 'p.yaml',
      })),
    );
    expect(v.resources.map((r) => r.name)).toEqual(['a', 'b', 'c']);
    expect(v.issues.map((i) => [i.severity, i.name, i.path])).toEqual([
      ['ignored', 'a', 'spec.natOutgoing'],
      ['ignored', 'a', 'spec.disableIPFragmentation'],
      ['warning', 'c', 'spec.blocksize'],
    ]);
  });

  it('plan --json lists warnings apart from errors; the examples have none', async () => {
    const loaded = await loadManifests(['examples/yaobank/base']);
    const typo = validateAll([{ object: calico('BGPPeer', 'tor', { peerIP: '192.0.2.1', asNumber: 65000, keepAliveTime: '10s' }), file: 'x.yaml' }]);
    const view = planJson(plan(stateOf([...loaded.resources, ...typo.resources]), 'worker1'), { issues: [...loaded.issues, ...typo.issues] });
    expect(view.errors).toEqual([]);
    expect(view.warnings).toEqual([
      {
        file: 'x.yaml',
        kind: 'BGPPeer',
        namespace: null,
        name: 'tor',
        field: 'spec.keepAliveTime',
        message: 'unknown field; ignored (did you mean keepaliveTime?)',
      },
    ]);
    expect(loaded.issues.filter((i) => i.severity === 'warning')).toEqual([]);
  });

  it('the API source reports the notes of valid objects until they are fixed or deleted', () => {
    const known = new KnownObjects('BGPPeer', 'crd.projectcalico.org/v1');
    const raw = (spec: object) => ({ metadata: { name: 'tor', uid: 'u1' }, spec: { peerIP: '192.0.2.1', asNumber: 65000, ...spec } });
    known.upsert(raw({ restartMode: 'LongLivedGracefulRestart' }));
    expect(known.issues().map((i) => [i.severity, i.path])).toEqual([['warning', 'spec.restartMode']]);
    known.upsert(raw({}));
    expect(known.issues()).toEqual([]);
    known.upsert(raw({ restartMode: 'LongLivedGracefulRestart' }));
    known.remove(raw({}));
    expect(known.issues()).toEqual([]);
  });
});

/** A value of the field's shape (for the property above; validity of values is not its concern). */
function sample(f: Field): unknown {
  switch (f.t) {
    case 'array':
      return [sample(f.items)];
    case 'object':
      return Object.fromEntries(Object.entries(f.props).map(([k, v]) => [k, sample(v)]));
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    default:
      return 'x';
  }
}
