import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { backoffDelay, KnownObjects } from '../../src/kubernetes/api-known.js';
import { ClusterState } from '../../src/kubernetes/state.js';
import type { IPPool } from '../../src/kubernetes/resources.js';

const CIDRS = ['10.0.0.0/16', '10.1.0.0/16', '10.2.0.0/16', '10.0.0.1/16' /* host bits: invalid */];
const pool = (name: string, cidr: string) => ({ metadata: { name, resourceVersion: '1' }, spec: { cidr } });
const snapshot = fc.uniqueArray(fc.record({ name: fc.constantFrom('a', 'b', 'c', 'd'), cidr: fc.constantFrom(...CIDRS) }), {
  selector: (x) => x.name,
  maxLength: 4,
});

describe('KnownObjects', () => {
  it('relists turn the state into the latest list, keeping the last valid version of an object that turned invalid', () => {
    fc.assert(
      fc.property(fc.array(snapshot, { minLength: 1, maxLength: 8 }), (lists) => {
        const known = new KnownObjects('IPPool', 'crd.projectcalico.org/v1');
        const state = new ClusterState();
        const model = new Map<string, string>();
        for (const list of lists) {
          const step = known.replaceAll(list.map((p) => pool(p.name, p.cidr)));
          for (const e of step.events) state.apply(e);
          const names = new Set<string>(list.map((p) => p.name));
          for (const n of [...model.keys()]) if (!names.has(n)) model.delete(n);
          for (const p of list) if (p.cidr !== '10.0.0.1/16') model.set(p.name, p.cidr);
          // The same list again is no change at all.
          expect(known.replaceAll(list.map((p) => pool(p.name, p.cidr))).events).toEqual([]);
        }
        const got = new Map([...state.ipPools.values()].map((p: IPPool) => [p.name, p.cidr.toString()]));
        expect(got).toEqual(model);
        expect(new Map(known.resources().map((r) => [r.name, (r as IPPool).cidr.toString()]))).toEqual(model);
      }),
    );
  });

  it('a list in pages gives the same events as the list in one piece; deletions come only at its end', () => {
    fc.assert(
      fc.property(snapshot, snapshot, fc.integer({ min: 1, max: 4 }), (before, after, size) => {
        const whole = new KnownObjects('IPPool', 'crd.projectcalico.org/v1');
        const paged = new KnownObjects('IPPool', 'crd.projectcalico.org/v1');
        const objs = (l: typeof before) => l.map((p) => pool(p.name, p.cidr));
        whole.replaceAll(objs(before));
        paged.replaceAll(objs(before));
        const expected = whole.replaceAll(objs(after));
        paged.beginList();
        const events = [];
        const items = objs(after);
        for (let i = 0; i < items.length; i += size) {
          const step = paged.listPage(items.slice(i, i + size));
          expect(step.events.every((e) => e.type !== 'delete')).toBe(true);
          events.push(...step.events);
        }
        events.push(...paged.endList().events);
        expect(events).toEqual(expected.events);
        expect(paged.resources()).toEqual(whole.resources());
      }),
    );
  });

  it('stamps kind/apiVersion on list items, reports an invalid object once, and clears its issue on delete', () => {
    const known = new KnownObjects('IPPool', 'crd.projectcalico.org/v1');
    expect(known.upsert(pool('a', '10.0.0.0/16')).events).toEqual([{ type: 'add', resource: expect.objectContaining({ kind: 'IPPool', name: 'a' }) }]);
    const bad = known.upsert(pool('a', '10.0.0.1/16'));
    expect(bad.events).toEqual([]);
    expect(bad.issues).toEqual([expect.objectContaining({ kind: 'IPPool', name: 'a', path: 'spec.cidr' })]);
    expect(known.upsert(pool('a', '10.0.0.1/16')).issues).toEqual([]);
    expect(known.issues()).toHaveLength(1);
    expect(known.remove(pool('a', '')).events).toEqual([{ type: 'delete', kind: 'IPPool', name: 'a', namespace: undefined }]);
    expect(known.issues()).toEqual([]);
    expect(known.remove(pool('a', '')).events).toEqual([]);
  });

  it('namespaced kinds key by namespace, defaulting to "default"', () => {
    const known = new KnownObjects('Service', 'v1');
    const svc = (ns: string | undefined, ip: string) => ({ metadata: { name: 'web', namespace: ns }, spec: { clusterIP: ip }, status: {} });
    expect(known.upsert(svc('a', '10.96.0.1')).events).toHaveLength(1);
    expect(known.upsert(svc('b', '10.96.0.1')).events).toHaveLength(1);
    expect(known.upsert(svc(undefined, '10.96.0.2')).events[0]).toMatchObject({ type: 'add', resource: { namespace: 'default' } });
    expect(known.remove(svc('a', '')).events).toEqual([{ type: 'delete', kind: 'Service', name: 'web', namespace: 'a' }]);
    expect(known.size).toBe(2);
  });
});

describe('backoffDelay', () => {
  it('grows exponentially to the cap, jittered downwards by at most the jitter share', () => {
    fc.assert(
      fc.property(
        fc.nat(40),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 0.9999, noNaN: true }),
        (attempt, initialMs, extra, jitter, r) => {
          const opts = { initialMs, maxMs: initialMs + extra, jitter };
          const base = Math.min(opts.maxMs, initialMs * 2 ** attempt);
          const d = backoffDelay(attempt, opts, r);
          expect(d).toBeLessThanOrEqual(Math.round(base));
          expect(d).toBeGreaterThanOrEqual(Math.floor(base * (1 - jitter)));
          expect(backoffDelay(attempt + 1, opts, r)).toBeGreaterThanOrEqual(d);
        },
      ),
    );
  });
});
