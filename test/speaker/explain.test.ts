import { afterEach, describe, expect, it } from 'vitest';
import { eventually, established, link, routeOf, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

const V4 = { families: ['ipv4' as const] };

describe('explain', () => {
  it('says which path won and why, and per peer what is sent, with the export policy trace', async () => {
    const a = await speaker('127.0.0.1', { asn: 65001 });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    const c = await speaker('127.0.0.3', { asn: 65003 });
    b.definePolicies({
      sets: { prefix: { lab: ['10.50.0.0/16 le 24'] } },
      policies: {
        out: { statements: [{ name: 'lab', conditions: { prefixSet: { set: 'lab' } }, actions: { community: { add: ['65002:7'] }, result: 'accept' } }] },
      },
    });
    link(a, b, V4, { ...V4, exportPolicies: ['out'] });
    link(c, b, V4, V4);
    await established(b, '127.0.0.1');
    await established(b, '127.0.0.3');
    a.originate('10.50.1.0/24', { asPath: [64900] });
    c.originate('10.50.1.0/24');
    c.originate('10.60.0.0/16');
    await eventually('both paths at B', () => b.received().filter((r) => r.prefix.toString() === '10.50.1.0/24').length === 2);
    await eventually('C route at B', () => routeOf(b, '10.60.0.0/16'));

    const x = b.explain('10.50.1.0/24');
    expect(x.candidates.map((k) => [k.from, k.outcome, k.step]).sort()).toEqual([
      ['127.0.0.1', 'lost', 'shorter AS_PATH'],
      ['127.0.0.3', 'best', 'shorter AS_PATH'],
    ]);
    const toA = x.peers.find((p) => p.peer === '127.0.0.1')!;
    expect(toA.sent).toBe(true);
    expect(toA.reason).toBe('policy "out" statement "lab" accepted the route');
    expect(toA.route).toMatchObject({ asPath: [65002, 65003], communities: ['65002:7'], nextHop: '127.0.0.2' });
    expect(toA.trace!.policies[0].statements[0].modifications).toEqual(['communities [] → [65002:7]']);
    // What explain says is what A really gets.
    await eventually('route at A', () => routeOf(a, '10.50.1.0/24')?.communities.includes('65002:7'));
    const toC = x.peers.find((p) => p.peer === '127.0.0.3')!;
    expect(toC).toMatchObject({ sent: false });
    expect(toC.reason).toContain('split horizon');

    // Outside the prefix set: RFC 8212 toward A; the trace shows the statement that did not match.
    const y = b.explain('10.60.0.0/16', '127.0.0.1');
    expect(y.candidates).toMatchObject([{ from: '127.0.0.3', outcome: 'best', step: 'only candidate' }]);
    expect(y.peers).toHaveLength(1);
    expect(y.peers[0]).toMatchObject({ peer: '127.0.0.1', sent: false });
    expect(y.peers[0].reason).toContain('RFC 8212');
    expect(y.peers[0].trace!.policies[0].statements[0].conditions[0]).toMatchObject({ matched: false });

    // A prefix nobody has.
    expect(b.explain('192.0.2.0/24', '127.0.0.1')).toMatchObject({ candidates: [], peers: [{ sent: false, reason: 'no route in the Loc-RIB' }] });
    expect(() => b.explain('192.0.2.0/24', '127.0.0.9')).toThrow('not configured');
  });
});
