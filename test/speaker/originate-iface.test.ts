/**
 * A route originated with its interface (`originate(…, { iface })`, as the
 * agent does for a route learned from the kernel) carries it to export
 * policy evaluation: an `interface` condition matches it, as BIRD's
 * `ifname ~ "cali*"` does. The interface is never sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, established, link, routeOf, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

const V4 = { families: ['ipv4' as const] };

describe('originate with an interface', () => {
  it('an export policy interface condition sees it; changing the interface re-evaluates the route', async () => {
    const router = await speaker('127.0.0.61', { asn: 65061 });
    const node = await speaker('127.0.0.62', { asn: 65062 });
    node.definePolicies({
      policies: {
        out: {
          statements: [
            { name: 'no-workloads', conditions: { interface: 'cali*' }, actions: { result: 'reject' } },
            { name: 'rest', actions: { result: 'accept' } },
          ],
        },
      },
    });
    link(router, node, V4, { ...V4, exportPolicies: ['out'] });
    await established(node, '127.0.0.61');

    node.originate('203.0.113.1/32', { communities: ['65062:1'] }, { iface: 'cali1234' });
    node.originate('203.0.113.2/32', { communities: ['65062:1'] }, { iface: 'eth0' });
    node.originate('203.0.113.3/32', { communities: ['65062:1'] });
    const received = () =>
      router
        .received()
        .map((r) => r.prefix.toString())
        .sort();
    await eventually('.2 and .3 at the router', () => received().length === 2);
    expect(received()).toEqual(['203.0.113.2/32', '203.0.113.3/32']);

    const x = node.explain('203.0.113.1/32', '127.0.0.61').peers[0];
    expect(x).toMatchObject({ sent: false });
    expect(x.trace!.policies[0].statements[0]).toMatchObject({ statement: 'no-workloads', matched: true });
    expect(JSON.stringify(x.trace)).toContain('interface cali1234 matches');
    expect(node.explain('203.0.113.3/32', '127.0.0.61').peers[0]).toMatchObject({ sent: true });

    // Same attributes, another interface: the route is re-evaluated both ways.
    node.originate('203.0.113.1/32', { communities: ['65062:1'] }, { iface: 'eth1' });
    node.originate('203.0.113.2/32', { communities: ['65062:1'] }, { iface: 'cali99' });
    await eventually('.1 in, .2 out', () => received().join() === '203.0.113.1/32,203.0.113.3/32');
    expect(routeOf(router, '203.0.113.1/32')).toMatchObject({ communities: ['65062:1'] });

    // Without the option the route has no interface again; withdraw still works on a route originated with one.
    node.originate('203.0.113.2/32', { communities: ['65062:1'] });
    node.withdraw('203.0.113.1/32');
    await eventually('.2 back, .1 gone', () => received().join() === '203.0.113.2/32,203.0.113.3/32');
    expect(received()).toEqual(['203.0.113.2/32', '203.0.113.3/32']);
  });

  it('refuses an empty interface name', async () => {
    const node = await speaker('127.0.0.63', { asn: 65063 });
    expect(() => node.originate('203.0.113.9/32', {}, { iface: '' })).toThrow(/originate 203\.0\.113\.9\/32: iface must be a non-empty interface name/);
  });
});

describe('routes received over BGP carry the interface toward their next hop', () => {
  it("a next hop on the session's connected network gets the session's interface (loopback here: lo); one elsewhere none", async () => {
    const router = await speaker('127.0.0.64', { asn: 65064 });
    const node = await speaker('127.0.0.65', { asn: 65064 }); // iBGP: the router's next hops arrive as it set them
    node.definePolicies({
      policies: {
        in: {
          statements: [
            { name: 'not-over-lo', conditions: { interface: 'l?' }, actions: { result: 'reject' } },
            { name: 'rest', actions: { result: 'accept' } },
          ],
        },
      },
    });
    link(router, node, V4, { ...V4, importPolicies: ['in'] });
    await established(node, '127.0.0.64');
    router.originate('198.51.100.0/24'); // next hop 127.0.0.64: on lo's 127.0.0.0/8
    router.originate('198.51.101.0/24', { nextHop: '192.0.2.7' }); // next hop on no network of the session
    await eventually('both at the node', () => node.receivedBeforeImport('127.0.0.64').length === 2);
    const imported = node.receivedBeforeImport('127.0.0.64');
    const accepted = (prefix: string) => imported.find((r) => r.route.prefix.toString() === prefix)?.accepted !== undefined;
    expect([accepted('198.51.100.0/24'), accepted('198.51.101.0/24')]).toEqual([false, true]);
    expect(received(node)).toEqual(['198.51.101.0/24']);
  });
});

const received = (s: { received(): readonly { prefix: { toString(): string } }[] }) =>
  s
    .received()
    .map((r) => r.prefix.toString())
    .sort();
