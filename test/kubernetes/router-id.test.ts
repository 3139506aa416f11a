/**
 * The router ID as calico-node decides it (confd bgp_processor.go):
 * CALICO_ROUTER_ID `hash` derives it from the node name, an address is taken
 * as it is, unset it is the node's IPv4 address.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashedRouterId, routerIdFor, routerIdSetting } from '../../src/kubernetes/config.js';
import { plan } from '../../src/kubernetes/plan.js';
import { stateOf } from '../../src/kubernetes/state.js';
import { planJson } from '../../src/agent/views.js';
import { Address } from '../../src/net/index.js';
import { bgpConfig, node, valid } from './helpers.js';
import type { Node } from '../../src/kubernetes/resources.js';

/** A node with an IPv6 address only (no IPv4 to take the router ID from). */
const v6only = (name: string): Node =>
  valid<Node>({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, annotations: { 'projectcalico.org/IPv6Address': '2001:db8::5/64' } },
    status: { addresses: [{ type: 'InternalIP', address: '2001:db8::5' }] },
  });

function planned(setting: string | undefined, nodes: Node[], name: string) {
  const s = stateOf([...nodes, bgpConfig({ asNumber: 64512 })]);
  s.routerIdSetting = setting;
  return plan(s, name);
}

describe('router ID (CALICO_ROUTER_ID)', () => {
  it('hash: the router ID Calico derives from the node name (its corpus case mesh/hash renders kube-master as 25.79.212.8)', () => {
    expect(hashedRouterId('kube-master').toString()).toBe('25.79.212.8');
    expect(routerIdFor('hash', 'kube-master', Address.parse('10.192.0.2'))).toEqual({ routerId: Address.parse('25.79.212.8') });
  });

  it('hash never gives a multicast or reserved router ID: a first byte above 223 is lowered by 32', () => {
    let high = 0;
    for (let i = 0; i < 400; i++) {
      const name = `node-${i}`;
      const first = createHash('sha256').update(name).digest()[0];
      const id = hashedRouterId(name).toString();
      const octet = Number(id.split('.')[0]);
      expect(octet).toBeLessThanOrEqual(223);
      // the other three bytes are the hash's, the first is the hash's or 32 below it
      expect(octet).toBe(first > 223 ? first - 32 : first);
      if (first > 223) high++;
    }
    expect(high).toBeGreaterThan(0);
  });

  it('unset: the node IPv4 address; an explicit address: that address, whatever the node has', () => {
    expect(planned(undefined, [node('w1', '192.0.2.10')], 'w1').node.routerId?.toString()).toBe('192.0.2.10');
    const p = planned('198.51.100.7', [node('w1', '192.0.2.10')], 'w1');
    expect(p.node.routerId?.toString()).toBe('198.51.100.7');
    expect(planJson(p).routerId).toBe('198.51.100.7');
    expect(p.errors).toEqual([]);
  });

  it('an IPv6-only node has no router ID unless CALICO_ROUTER_ID gives one (hash or an address)', () => {
    expect(planned(undefined, [v6only('v6')], 'v6').node.routerId).toBeUndefined();
    expect(planJson(planned(undefined, [v6only('v6')], 'v6')).routerId).toBeNull();
    const h = planned('hash', [v6only('v6')], 'v6');
    expect(h.node.routerId?.toString()).toBe(hashedRouterId('v6').toString());
    expect(planJson(h).routerId).toBe(hashedRouterId('v6').toString());
    expect(planned('10.10.10.10', [v6only('v6')], 'v6').node.routerId?.toString()).toBe('10.10.10.10');
  });

  it('a value that is neither hash nor an IPv4 address is a plan error naming the variable, and the node has no router ID', () => {
    for (const bad of ['Hash', '2001:db8::1', '10.0.0', 'node-ip']) {
      const p = planned(bad, [node('w1', '192.0.2.10')], 'w1');
      expect(p.node.routerId).toBeUndefined();
      expect(p.errors).toEqual([
        { kind: 'Node', name: 'w1', field: 'CALICO_ROUTER_ID', message: `CALICO_ROUTER_ID=${JSON.stringify(bad)} is neither an IPv4 address nor "hash"` },
      ]);
    }
  });

  it('read from the environment as calico-node reads it: empty is unset', () => {
    expect(routerIdSetting({ CALICO_ROUTER_ID: 'hash' })).toBe('hash');
    expect(routerIdSetting({ CALICO_ROUTER_ID: '' })).toBeUndefined();
    expect(routerIdSetting({})).toBeUndefined();
  });
});
