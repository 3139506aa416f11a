import { describe, expect, it } from 'vitest';
import { peerOptions } from '../../src/kubernetes/reconcile.js';
import type { BGPPeer } from '../../src/kubernetes/resources.js';
import { validateObject } from '../../src/kubernetes/validate.js';
import { bgpConfig, node, planFor, valid } from './helpers.js';

const bfdPeer = (name: string, peerIP: string, annotations: Record<string, string> = {}, mode = 'BFDIfDirectlyConnected'): BGPPeer =>
  valid<BGPPeer>({
    apiVersion: 'projectcalico.org/v3',
    kind: 'BGPPeer',
    metadata: { name, annotations },
    spec: { peerIP, asNumber: 65000, failureDetectionMode: mode },
  });

const worker = (addr?: string) => node('worker1', '192.0.2.10', { annotations: addr ? { 'projectcalico.org/IPv4Address': addr } : {} });

describe('BGPPeer failureDetectionMode: BFDIfDirectlyConnected', () => {
  it('a peer inside the node subnet (its Calico address with prefix length) gets BFD, with the annotation timers', () => {
    const rs = [
      worker('192.0.2.10/24'),
      bgpConfig({ nodeToNodeMeshEnabled: false }),
      bfdPeer('tor', '192.0.2.1', {
        'tsbgp.io/bfd-receive-interval': '200',
        'tsbgp.io/bfd-transmit-interval': '250',
        'tsbgp.io/bfd-detect-multiplier': '4',
        'tsbgp.io/bfd-passive-mode': 'true',
      }),
    ];
    const p = planFor(rs, 'worker1');
    expect(p.errors).toEqual([]);
    expect(p.peers[0].bfd).toEqual({ minRx: 200, minTx: 250, multiplier: 4, passive: true });
    expect(peerOptions(p.peers[0]).bfd).toEqual({ minRx: 200, minTx: 250, multiplier: 4, passive: true });
  });

  it("defaults are MetalLB BFDProfile's: 300 ms, 300 ms, 3, active", () => {
    const p = planFor([worker('192.0.2.10/24'), bgpConfig({ nodeToNodeMeshEnabled: false }), bfdPeer('tor', '192.0.2.1')], 'worker1');
    expect(p.peers[0].bfd).toEqual({ minRx: 300, minTx: 300, multiplier: 3, passive: false });
  });

  it('a peer beyond the subnet, or mode None, gets none', () => {
    const far = planFor([worker('192.0.2.10/26'), bgpConfig({ nodeToNodeMeshEnabled: false }), bfdPeer('far', '192.0.2.100')], 'worker1');
    expect(far.peers[0].bfd).toBeUndefined();
    expect(far.errors).toEqual([]);
    const none = planFor([worker('192.0.2.10/24'), bgpConfig({ nodeToNodeMeshEnabled: false }), bfdPeer('tor', '192.0.2.1', {}, 'None')], 'worker1');
    expect(none.peers[0].bfd).toBeUndefined();
    expect(peerOptions(none.peers[0]).bfd).toBeUndefined();
  });

  it('without a prefix length no peer counts as directly connected, and the plan says so', () => {
    const p = planFor([worker(), bgpConfig({ nodeToNodeMeshEnabled: false }), bfdPeer('tor', '192.0.2.1')], 'worker1');
    expect(p.peers[0].bfd).toBeUndefined();
    expect(p.errors).toEqual([
      expect.objectContaining({
        kind: 'BGPPeer',
        name: 'tor',
        field: 'spec.failureDetectionMode',
        message: expect.stringContaining('no IPv4 address with a prefix length'),
      }),
    ]);
  });

  it('bad timer annotations are errors naming the annotation', () => {
    const r = validateObject(
      {
        apiVersion: 'projectcalico.org/v3',
        kind: 'BGPPeer',
        metadata: {
          name: 'x',
          annotations: { 'tsbgp.io/bfd-detect-multiplier': '1', 'tsbgp.io/bfd-receive-interval': 'fast', 'tsbgp.io/bfd-passive-mode': 'yes' },
        },
        spec: { peerIP: '192.0.2.1', asNumber: 65000, failureDetectionMode: 'BFDIfDirectlyConnected' },
      },
      'x.yaml',
    );
    expect(r.ok).toBe(false);
    const text = JSON.stringify(r);
    expect(text).toContain('metadata.annotations.tsbgp.io/bfd-detect-multiplier');
    expect(text).toContain('metadata.annotations.tsbgp.io/bfd-receive-interval');
    expect(text).toContain('metadata.annotations.tsbgp.io/bfd-passive-mode');
  });

  it('an unknown mode is refused', () => {
    const r = validateObject(
      {
        apiVersion: 'projectcalico.org/v3',
        kind: 'BGPPeer',
        metadata: { name: 'x' },
        spec: { peerIP: '192.0.2.1', asNumber: 65000, failureDetectionMode: 'BFD' },
      },
      'x.yaml',
    );
    expect(JSON.stringify(r)).toContain('spec.failureDetectionMode');
  });
});
