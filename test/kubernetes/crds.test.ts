import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CRD_DIR, KINDS, crdFor, nodeStatusCrd, renderCrdFiles } from '../../scripts/gen-crds.js';
import { readNodeStatusRequest } from '../../src/agent/node-status.js';
import { watchedResources } from '../../src/agent/sources/api-source.js';
import { validateObject } from '../../src/kubernetes/validate.js';
import { everyKind } from './api-fixtures.js';

/** Just enough OpenAPI v3 checking for the generated schemas: types, enums, ranges, required, patterns. */
function check(schema: any, v: unknown, path: string, errors: string[]): void {
  if (schema['x-kubernetes-int-or-string']) {
    if (typeof v !== 'string' && !Number.isInteger(v)) errors.push(`${path}: not int-or-string`);
    return;
  }
  switch (schema.type) {
    case 'string':
      if (typeof v !== 'string') return void errors.push(`${path}: not a string`);
      if (schema.enum && !schema.enum.includes(v)) errors.push(`${path}: ${v} not in enum`);
      if (schema.pattern && !new RegExp(schema.pattern, 'u').test(v)) errors.push(`${path}: ${v} does not match ${schema.pattern}`);
      return;
    case 'integer':
      if (!Number.isInteger(v)) return void errors.push(`${path}: not an integer`);
      if (schema.minimum !== undefined && (v as number) < schema.minimum) errors.push(`${path}: below minimum`);
      if (schema.maximum !== undefined && (v as number) > schema.maximum) errors.push(`${path}: above maximum`);
      return;
    case 'boolean':
      if (typeof v !== 'boolean') errors.push(`${path}: not a boolean`);
      return;
    case 'array':
      if (!Array.isArray(v)) return void errors.push(`${path}: not an array`);
      if (schema.maxItems !== undefined && v.length > schema.maxItems) errors.push(`${path}: too many items`);
      v.forEach((x, i) => check(schema.items, x, `${path}[${i}]`, errors));
      return;
    case 'object': {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return void errors.push(`${path}: not an object`);
      const o = v as Record<string, unknown>;
      for (const r of schema.required ?? []) if (!(r in o)) errors.push(`${path}.${r}: required`);
      if (schema.maxProperties !== undefined && Object.keys(o).length > schema.maxProperties) errors.push(`${path}: too many properties`);
      for (const [k, x] of Object.entries(o)) {
        const sub = schema.properties?.[k];
        if (sub) check(sub, x, `${path}.${k}`, errors);
        else if (!schema['x-kubernetes-preserve-unknown-fields'] && schema.properties) errors.push(`${path}.${k}: unknown field`);
      }
    }
  }
}

function schemaErrors(raw: { kind: string; spec?: unknown }): string[] {
  const k = KINDS.find((x) => x.kind === raw.kind)!;
  const crd = crdFor(k) as any;
  const errors: string[] = [];
  check(crd.spec.versions[0].schema.openAPIV3Schema.properties.spec, raw.spec, 'spec', errors);
  return errors;
}

describe('deploy/crds', () => {
  it('the committed files are exactly the generator output', () => {
    const want = renderCrdFiles();
    const have = readdirSync(CRD_DIR).sort();
    expect(have).toEqual([...want.keys()].sort());
    for (const [name, text] of want) expect(readFileSync(join(CRD_DIR, name), 'utf8'), name).toBe(text);
  });

  it('defines a cluster-scoped v1 CRD for every Calico kind the API source watches', () => {
    const calico = watchedResources('crd.projectcalico.org/v1').filter((w) => w.group === 'crd.projectcalico.org');
    const files = renderCrdFiles();
    for (const w of calico) {
      const crd = parse(files.get(`crd.projectcalico.org_${w.plural}.yaml`)!);
      expect(crd.metadata.name).toBe(`${w.plural}.crd.projectcalico.org`);
      expect(crd.spec.names).toMatchObject({ kind: w.kind, plural: w.plural });
      expect(crd.spec.scope).toBe('Cluster');
      expect(crd.spec.versions.map((v: { name: string }) => v.name)).toEqual(['v1']);
    }
    expect(KINDS.map((k) => k.plural).sort()).toEqual(calico.map((w) => w.plural).sort());
  });

  it('accepts objects the validator accepts, and rejects wrong types and enum values', () => {
    const rich = [
      ...everyKind().filter((o) => KINDS.some((k) => k.kind === o.kind)),
      {
        apiVersion: 'crd.projectcalico.org/v1',
        kind: 'BGPPeer',
        metadata: { name: 'full' },
        spec: {
          nodeSelector: "rack == 'a'",
          peerIP: '[2001:db8::1]:1790',
          asNumber: '1.10',
          password: { secretKeyRef: { name: 's', key: 'k' } },
          keepaliveTime: '30s',
          maxRestartTime: '2m30s',
          filters: ['f'],
          ttlSecurity: 1,
        },
      },
      {
        apiVersion: 'crd.projectcalico.org/v1',
        kind: 'BGPFilter',
        metadata: { name: 'ops' },
        spec: {
          exportV4: [
            {
              action: 'Accept',
              cidr: '10.0.0.0/8',
              matchOperator: 'In',
              prefixLength: { min: 16, max: 24 },
              operations: [{ addCommunity: { value: '64512:100' } }, { setPriority: { value: 10 } }],
            },
          ],
        },
      },
    ];
    for (const o of rich) {
      expect(validateObject(o).ok, `${o.kind} ${o.metadata.name} valid`).toBe(true);
      expect(schemaErrors(o), `${o.kind} ${o.metadata.name}`).toEqual([]);
    }
    expect(schemaErrors({ kind: 'IPPool', spec: { cidr: '10.0.0.0/8', blockSize: 8 } })).toEqual(['spec.blockSize: below minimum']);
    expect(schemaErrors({ kind: 'BGPPeer', spec: { nextHopMode: 'Sometimes' } })).toEqual(['spec.nextHopMode: Sometimes not in enum']);
    expect(schemaErrors({ kind: 'BlockAffinity', spec: { cidr: '10.0.0.0/26' } })).toEqual(['spec.node: required']);
    expect(schemaErrors({ kind: 'BGPConfiguration', spec: { nodeMeshMaxRestartTime: 'soon' } })).toHaveLength(1);
    // Calico's own fields the validator does not read are kept, not pruned.
    expect(schemaErrors({ kind: 'BGPConfiguration', spec: { ignoredInterfaces: ['eth9'] } })).toEqual([]);
  });

  it('CalicoNodeStatus: cluster-scoped, a status subresource, a spec the agent reads and the schema agrees on', () => {
    const crd = nodeStatusCrd() as any;
    expect(crd.spec.scope).toBe('Cluster');
    const v = crd.spec.versions[0];
    expect(v.subresources).toEqual({ status: {} });
    const spec = v.schema.openAPIV3Schema.properties.spec;
    const errors = (s: unknown) => {
      const out: string[] = [];
      check(spec, s, 'spec', out);
      return out;
    };
    const good = { node: 'n1', classes: ['Agent', 'BGP', 'Routes'], updatePeriodSeconds: 30 };
    expect(errors(good)).toEqual([]);
    expect(readNodeStatusRequest({ metadata: { name: 'x' }, spec: good }).ok).toBe(true);
    const bad = { node: 'n1', classes: ['Peers'], updatePeriodSeconds: 86_401 };
    expect(errors(bad)).toEqual(['spec.classes[0]: Peers not in enum', 'spec.updatePeriodSeconds: above maximum']);
    expect(readNodeStatusRequest({ metadata: { name: 'x' }, spec: bad }).ok).toBe(false);
  });
});
