/**
 * Issue 14: a BGPPeer's own max-prefix limit, from the tsbgp.io/max-prefixes
 * annotation (Calico's BGPPeer CRD has no such field and drops unknown spec fields).
 */
import { describe, expect, it } from 'vitest';
import { defaultMaxPrefixes, parseMaxPrefixes } from '../../src/agent/max-prefixes.js';
import { peerOptions, reconcile } from '../../src/kubernetes/reconcile.js';
import { renderPlan } from '../../src/agent/render.js';
import { planJson } from '../../src/agent/views.js';
import type { BGPPeer } from '../../src/kubernetes/resources.js';
import { validateObject } from '../../src/kubernetes/validate.js';
import { bgpConfig, node, planFor, valid } from '../kubernetes/helpers.js';

const tor = (annotations: Record<string, string> = {}, name = 'tor', peerIP = '192.0.2.1'): BGPPeer =>
  valid<BGPPeer>({ apiVersion: 'projectcalico.org/v3', kind: 'BGPPeer', metadata: { name, annotations }, spec: { peerIP, asNumber: 65000 } });
const worker = node('worker1', '192.0.2.10');
const noMesh = bgpConfig({ nodeToNodeMeshEnabled: false });

describe('BGPPeer tsbgp.io/max-prefixes', () => {
  it("sets that peer's limit, over the agent's --max-prefixes; other peers keep the agent's", () => {
    const p = planFor([worker, noMesh, tor({ 'tsbgp.io/max-prefixes': '50000,restart,90%' }), tor({}, 'other', '192.0.2.2')], 'worker1');
    expect(p.errors).toEqual([]);
    const byName = new Map(p.peers.map((x) => [x.from?.name, x]));
    expect(byName.get('tor')!.maxPrefixes).toEqual({ limit: 50000, action: 'restart', warningThreshold: 90 });
    expect(byName.get('other')!.maxPrefixes).toBeUndefined();
    const agent = parseMaxPrefixes('3000,warn');
    expect(peerOptions(byName.get('tor')!, agent).maxPrefixes).toEqual({
      ipv4: { limit: 50000, action: 'restart', warningThreshold: 90 },
      ipv6: { limit: 50000, action: 'restart', warningThreshold: 90 },
    });
    expect(peerOptions(byName.get('other')!, agent).maxPrefixes).toEqual(agent);
    expect(peerOptions(byName.get('other')!, defaultMaxPrefixes()).maxPrefixes).toEqual(defaultMaxPrefixes());
  });

  it('"0" turns the limit off for that peer even when the agent has one', () => {
    const p = planFor([worker, noMesh, tor({ 'tsbgp.io/max-prefixes': '0' })], 'worker1');
    expect(p.peers[0].maxPrefixes).toBeNull();
    expect(peerOptions(p.peers[0], defaultMaxPrefixes()).maxPrefixes).toBeUndefined();
  });

  it('a bad value is an error naming the annotation and what is wrong', () => {
    for (const [value, why] of [
      ['lots', 'LIMIT "lots" is not a whole number'],
      ['100,drop', 'ACTION "drop" is not block, warn or restart'],
      ['100,block,150%', 'WARN% "150%" is not a percentage 1-100'],
      ['0,block', 'LIMIT 0 (no limit) takes no ACTION or WARN%'],
    ]) {
      const r = validateObject(
        {
          apiVersion: 'projectcalico.org/v3',
          kind: 'BGPPeer',
          metadata: { name: 'x', annotations: { 'tsbgp.io/max-prefixes': value } },
          spec: { peerIP: '192.0.2.1', asNumber: 65000 },
        },
        'x.yaml',
      );
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.issues).toEqual([expect.objectContaining({ path: 'metadata.annotations.tsbgp.io/max-prefixes', message: expect.stringContaining(why) })]);
    }
  });

  it("tsbgp plan shows each peer's limit and where it comes from", () => {
    const p = planFor([worker, noMesh, tor({ 'tsbgp.io/max-prefixes': '500,warn,50' }), tor({}, 'other', '192.0.2.2')], 'worker1');
    const view = planJson(p);
    const by = new Map(view.peers.map((x) => [x.address, x.maxPrefixes]));
    expect(by.get('192.0.2.1')).toEqual({ limit: '500,warn,50%', from: 'annotation' });
    expect(by.get('192.0.2.2')).toEqual({ limit: '20000,block,80%', from: 'agent' });
    expect(planJson(p, { maxPrefixes: null }).peers.find((x) => x.address === '192.0.2.2')!.maxPrefixes).toEqual({ limit: 'none', from: 'agent' });
    const text = renderPlan(view);
    expect(text).toContain('max-prefixes 500,warn,50% (tsbgp.io/max-prefixes)');
    expect(text).toContain('max-prefixes 20000,block,80%  exports');
  });

  it('changing the annotation is a peer update the agent applies (not a silent no-op)', () => {
    const before = planFor([worker, noMesh, tor()], 'worker1');
    const after = planFor([worker, noMesh, tor({ 'tsbgp.io/max-prefixes': '100' })], 'worker1');
    const ops = reconcile(before, after, { maxPrefixes: defaultMaxPrefixes() });
    expect(ops.updatePeers).toHaveLength(1);
    expect(ops.updatePeers[0].changed).toEqual(['maxPrefixes']);
    expect(ops.updatePeers[0].options.maxPrefixes?.ipv4).toEqual({ limit: 100, action: 'block', warningThreshold: 80 });
  });
});
