/**
 * The Calico kinds' enums and ranges are schema.ts's: every enum field
 * refuses a value outside the schema's list (and names the list), every
 * integer field refuses the value past the schema's maximum, each at its
 * path. A field added to the schema with an enum or range is checked here
 * without a new test.
 */
import { describe, expect, it } from 'vitest';
import { KINDS, type Field } from '../../src/kubernetes/schema.js';
import { validateObject } from '../../src/kubernetes/validate.js';
import { specFields } from '../../src/kubernetes/validate-fields.js';

/** A valid spec of each kind, and where its field maps are (BGPFilter: a rule). */
const BASES: Record<
  string,
  { spec: Record<string, unknown>; at: (spec: Record<string, unknown>) => Record<string, unknown>; path: string; schema: (k: (typeof KINDS)[number]) => Field }
> = {
  BGPConfiguration: { spec: {}, at: (s) => s, path: 'spec', schema: (k) => k.spec },
  BGPPeer: { spec: { peerIP: '192.0.2.1', asNumber: 65000 }, at: (s) => s, path: 'spec', schema: (k) => k.spec },
  IPPool: { spec: { cidr: '198.19.0.0/16' }, at: (s) => s, path: 'spec', schema: (k) => k.spec },
  BlockAffinity: { spec: { node: 'n', cidr: '198.19.0.0/26' }, at: (s) => s, path: 'spec', schema: (k) => k.spec },
  BGPFilter: {
    spec: { exportV4: [{ action: 'Accept', cidr: '198.19.0.0/16', matchOperator: 'In' }] },
    at: (s) => (s.exportV4 as Record<string, unknown>[])[0],
    path: 'spec.exportV4[0]',
    schema: (k) => (k.spec.props.exportV4 as Field & { t: 'array' }).items,
  },
};

const object = (kind: string, spec: unknown) => ({ apiVersion: 'projectcalico.org/v3', kind, metadata: { name: 'default' }, spec });

describe('the Calico kinds are checked against schema.ts', () => {
  it('every kind of the schema has a valid base here, and it validates', () => {
    expect(KINDS.map((k) => k.kind).sort()).toEqual(Object.keys(BASES).sort());
    for (const k of KINDS) expect(validateObject(object(k.kind, BASES[k.kind].spec)).ok, k.kind).toBe(true);
  });

  for (const k of KINDS) {
    const base = BASES[k.kind];
    const props = (base.schema(k) as Field & { t: 'object' }).props;
    for (const [name, f] of Object.entries(props)) {
      if (f.t === 'string' && f.enum) {
        it(`${k.kind} ${base.path}.${name}: one of ${f.enum.join(', ')}`, () => {
          for (const good of f.enum!) {
            const spec = structuredClone(base.spec);
            base.at(spec)[name] = good;
            expect(validateObject(object(k.kind, spec)).ok, good).toBe(true);
          }
          const spec = structuredClone(base.spec);
          base.at(spec)[name] = 'NotAValue';
          const r = validateObject(object(k.kind, spec));
          expect(r.ok).toBe(false);
          if (!r.ok)
            expect(r.issues).toContainEqual(
              expect.objectContaining({ path: `${base.path}.${name}`, message: `unknown value "NotAValue" (expected one of ${f.enum!.join(', ')})` }),
            );
        });
      }
      if (f.t === 'integer' && f.max !== undefined && !(k.kind === 'IPPool' && name === 'blockSize')) {
        it(`${k.kind} ${base.path}.${name}: ${f.min} to ${f.max}`, () => {
          const spec = structuredClone(base.spec);
          base.at(spec)[name] = f.max! + 1;
          const r = validateObject(object(k.kind, spec));
          expect(r.ok).toBe(false);
          if (!r.ok)
            expect(r.issues).toContainEqual(
              expect.objectContaining({ path: `${base.path}.${name}`, message: `${f.max! + 1} is out of range (${f.min} to ${f.max})` }),
            );
          base.at(spec)[name] = f.max;
          expect(validateObject(object(k.kind, spec)).ok).toBe(true);
        });
      }
    }
  }

  it('a field the schema does not declare with that type is a programming error, not a user error', () => {
    expect(() => specFields('BGPPeer').int({ asNumber: 1 }, 'asNumber', 'spec.')).toThrow('schema.ts: BGPPeer spec.asNumber is not declared as integer');
    expect(() => specFields('BGPPeer', 'nope')).toThrow('schema.ts: BGPPeer spec has no nope');
  });
});
