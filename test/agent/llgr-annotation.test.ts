/**
 * RFC 9494 long-lived graceful restart on a BGPPeer: Calico OSS's BGPPeer has
 * only maxRestartTime (graceful restart), so the long-lived stale time is the
 * tsbgp.io/long-lived-stale-time annotation, a duration like maxRestartTime.
 */
import { describe, expect, it } from 'vitest';
import { defaultMaxPrefixes } from '../../src/agent/max-prefixes.js';
import { peerOptions, reconcile } from '../../src/kubernetes/reconcile.js';
import { planJson } from '../../src/agent/views.js';
import type { BGPPeer } from '../../src/kubernetes/resources.js';
import { validateObject } from '../../src/kubernetes/validate.js';
import { bgpConfig, node, planFor, valid } from '../kubernetes/helpers.js';

const KEY = 'tsbgp.io/long-lived-stale-time';
const tor = (annotations: Record<string, string> = {}, name = 'tor', peerIP = '192.0.2.1', spec: Record<string, unknown> = {}): BGPPeer =>
  valid<BGPPeer>({ apiVersion: 'projectcalico.org/v3', kind: 'BGPPeer', metadata: { name, annotations }, spec: { peerIP, asNumber: 65000, ...spec } });
const worker = node('worker1', '192.0.2.10');
const noMesh = bgpConfig({ nodeToNodeMeshEnabled: false });

describe('BGPPeer tsbgp.io/long-lived-stale-time', () => {
  it('turns on LLGR for that peer with the stale time, next to maxRestartTime; other peers have none', () => {
    const p = planFor([worker, noMesh, tor({ [KEY]: '1h' }, 'tor', '192.0.2.1', { maxRestartTime: '30s' }), tor({}, 'other', '192.0.2.2')], 'worker1');
    expect(p.errors).toEqual([]);
    const byName = new Map(p.peers.map((x) => [x.from?.name, x]));
    expect(byName.get('tor')!.longLivedStaleTime).toBe(3600);
    expect(byName.get('other')!.longLivedStaleTime).toBeUndefined();
    expect(peerOptions(byName.get('tor')!, defaultMaxPrefixes()).gracefulRestart).toEqual({ restartTime: 30, longLivedStaleTime: 3600 });
    expect(peerOptions(byName.get('other')!, defaultMaxPrefixes()).gracefulRestart).toEqual({ restartTime: 120 });
  });

  it('plan --json shows it per peer', () => {
    const p = planFor([worker, noMesh, tor({ [KEY]: '600s' }), tor({}, 'other', '192.0.2.2')], 'worker1');
    const by = new Map(planJson(p).peers.map((x) => [x.address, x.gracefulRestart]));
    expect(by.get('192.0.2.1')).toEqual({ restartTime: 120, longLivedStaleTime: 600 });
    expect(by.get('192.0.2.2')).toEqual({ restartTime: 120, longLivedStaleTime: null });
  });

  it('a bad value is an error naming the annotation', () => {
    for (const [value, why] of [
      ['soon', 'expected a duration'],
      ['0s', 'must be whole seconds from 1s to 16777215s'],
      ['1500ms', 'must be whole seconds'],
      ['5000h', 'must be whole seconds from 1s to 16777215s'],
    ]) {
      const r = validateObject(
        {
          apiVersion: 'projectcalico.org/v3',
          kind: 'BGPPeer',
          metadata: { name: 'x', annotations: { [KEY]: value } },
          spec: { peerIP: '192.0.2.1', asNumber: 65000 },
        },
        'x.yaml',
      );
      expect(r.ok, value).toBe(false);
      if (r.ok) continue;
      expect(r.issues).toEqual([expect.objectContaining({ path: `metadata.annotations.${KEY}`, message: expect.stringContaining(why) })]);
    }
  });

  it('changing the annotation is a peer update the agent applies', () => {
    const before = planFor([worker, noMesh, tor()], 'worker1');
    const after = planFor([worker, noMesh, tor({ [KEY]: '2h' })], 'worker1');
    const ops = reconcile(before, after, { maxPrefixes: defaultMaxPrefixes() });
    expect(ops.updatePeers).toHaveLength(1);
    expect(ops.updatePeers[0].changed).toContain('gracefulRestart');
  });
});
