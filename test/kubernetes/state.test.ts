import { describe, expect, it } from 'vitest';
import { ClusterState } from '../../src/kubernetes/state.js';
import { resourceKey } from '../../src/kubernetes/resources.js';
import { slice, svc } from './helpers.js';

describe('ClusterState slices by Service (one slice kept bare, several in a map)', () => {
  it('finds one, two, then one slice again as they come and go, in name order', () => {
    const s = new ClusterState();
    s.apply({ type: 'add', resource: svc('web') });
    s.apply({ type: 'add', resource: slice('web-b', 'web', [{ node: 'worker1' }]) });
    expect(s.slicesOf('default', 'web').map((x) => x.name)).toEqual(['web-b']);
    s.apply({ type: 'add', resource: slice('web-a', 'web', [{ node: 'worker2' }]) });
    expect(s.slicesOf('default', 'web').map((x) => x.name)).toEqual(['web-a', 'web-b']);
    s.apply({ type: 'delete', kind: 'EndpointSlice', name: 'web-b', namespace: 'default' });
    expect(s.slicesOf('default', 'web').map((x) => x.name)).toEqual(['web-a']);
    // An update of the one slice replaces it; moving it to another Service unindexes it here.
    s.apply({ type: 'update', resource: slice('web-a', 'web', [{ node: 'worker3' }]) });
    expect(s.slicesOf('default', 'web')[0].endpoints.map((e) => e.nodeName)).toEqual(['worker3']);
    s.apply({ type: 'update', resource: slice('web-a', 'api', [{ node: 'worker3' }]) });
    expect(s.slicesOf('default', 'web')).toEqual([]);
    expect(s.slicesOf('default', 'api').map((x) => x.name)).toEqual(['web-a']);
    // Deleting a slice of another name leaves the one there.
    s.apply({ type: 'delete', kind: 'EndpointSlice', name: 'api-z', namespace: 'default' });
    expect(s.slicesOf('default', 'api').map((x) => x.name)).toEqual(['web-a']);
    s.apply({ type: 'delete', kind: 'EndpointSlice', name: 'web-a', namespace: 'default' });
    expect(s.slicesOf('default', 'api')).toEqual([]);
  });
});

describe('validated resources keep exact, shared lists (docs/agent-memory.md)', () => {
  it('shares empty lists, labels, IP family lists and endpoints between resources, frozen', () => {
    const a = svc('a', { type: 'LoadBalancer', clusterIP: '10.96.0.1', lbIngress: [{ ip: '192.0.2.1' }] });
    const b = svc('b');
    expect(a.externalIPs).toBe(b.externalIPs);
    expect(a.externalIPs).toEqual([]);
    expect(Object.isFrozen(a.externalIPs)).toBe(true);
    expect(a.labels).toBe(b.labels);
    expect(Object.isFrozen(a.labels)).toBe(true);
    expect(a.ipFamilies).toBe(b.ipFamilies);
    expect(a.ipFamilies).toEqual([4]);
    const x = slice('x', 'a', [{ node: 'worker1', ready: true }]);
    const y = slice('y', 'b', [{ node: 'worker1' }, { node: 'worker2', ready: false }]);
    expect(x.endpoints[0]).toBe(y.endpoints[0]);
    expect(y.endpoints).toEqual([
      { nodeName: 'worker1', ready: true },
      { nodeName: 'worker2', ready: false },
    ]);
  });

  it('builds keys as before', () => {
    expect(resourceKey('Service', 's1', 'bench')).toBe('Service/bench/s1');
    expect(resourceKey('Node', 'worker1')).toBe('Node/worker1');
    expect(resourceKey('EndpointSlice', 'x')).toBe('EndpointSlice//x');
  });
});
