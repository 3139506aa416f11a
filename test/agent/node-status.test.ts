import { describe, expect, it } from 'vitest';
import { birdTime, nodeStatus, readNodeStatusRequest, reportSchedule, statusPatch, type NodeStatusInput } from '../../src/agent/node-status.js';
import { Prefix } from '../../src/net/index.js';

const T0 = new Date('2026-03-01T10:00:00Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);

function request(spec: Record<string, unknown>, name = 'ask-n1') {
  return readNodeStatusRequest({ apiVersion: 'crd.projectcalico.org/v1', kind: 'CalicoNodeStatus', metadata: { name }, spec });
}

const INPUT: NodeStatusInput = {
  running: true,
  version: 'tsbgp 1.2.3',
  routerId: '192.0.2.1',
  startedAt: T0,
  reconfiguredAt: at(5),
  sessions: [
    { address: '192.0.2.3', state: 'Active', since: at(7) },
    { address: '192.0.2.2', state: 'Established', since: at(6) },
    { address: '2001:db8::2', state: 'Established', since: at(8) },
    { address: '198.51.100.9', state: 'Established', since: at(9) },
  ],
  peerTypes: new Map([
    ['192.0.2.2', 'node-to-node mesh'],
    ['192.0.2.3', 'global'],
    ['2001:db8::2', 'node specific'],
  ]),
  received: [
    { prefix: Prefix.parse('198.18.1.0/26'), peer: '192.0.2.2', best: true, nextHop: '192.0.2.2' },
    { prefix: Prefix.parse('198.18.1.0/26'), peer: '192.0.2.3', best: false, nextHop: '192.0.2.3' },
    { prefix: Prefix.parse('2001:db8:1::/64'), peer: '2001:db8::2', best: true, nextHop: '2001:db8::2' },
  ],
  originated: [Prefix.parse('198.18.0.0/26')],
};

describe('CalicoNodeStatus requests', () => {
  it('reads node, classes and period', () => {
    const r = request({ node: 'n1', classes: ['Agent', 'Routes'], updatePeriodSeconds: 30 });
    expect(r.ok && r.request).toMatchObject({ name: 'ask-n1', node: 'n1', classes: ['Agent', 'Routes'], updatePeriodSeconds: 30 });
  });

  it('a missing period means no periodic refresh, as 0 does', () => {
    const r = request({ node: 'n1', classes: ['BGP'] });
    expect(r.ok && r.request.updatePeriodSeconds).toBe(0);
  });

  it.each([
    [{ classes: ['BGP'] }, /spec\.node: is required/],
    [{ node: 'n1', classes: ['BGP', 'Peers'] }, /spec\.classes\[1\]: "Peers" is not one of Agent, BGP, Routes/],
    [{ node: 'n1', classes: ['BGP', 'BGP'] }, /spec\.classes\[1\]: "BGP" is listed twice/],
    [{ node: 'n1', classes: 'BGP' }, /spec\.classes: expected a list/],
    [{ node: 'n1', updatePeriodSeconds: 86_401 }, /spec\.updatePeriodSeconds: .* 0 to 86400, got 86401/],
    [{ node: 'n1', updatePeriodSeconds: -1 }, /spec\.updatePeriodSeconds/],
  ])('refuses %j naming the field', (spec, message) => {
    const r = request(spec);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(new RegExp(`^CalicoNodeStatus ask-n1: ${message.source}`));
  });

  it('a change of the spec is a new request; a change of status or metadata is not', () => {
    const a = request({ node: 'n1', classes: ['BGP'], updatePeriodSeconds: 10 });
    const b = readNodeStatusRequest({
      metadata: { name: 'ask-n1', resourceVersion: '9' },
      spec: { node: 'n1', classes: ['BGP'], updatePeriodSeconds: 10 },
      status: { bgp: {} },
    });
    const c = request({ node: 'n1', classes: ['BGP', 'Agent'], updatePeriodSeconds: 10 });
    expect(a.ok && b.ok && c.ok).toBe(true);
    if (a.ok && b.ok && c.ok) {
      expect(b.request.specKey).toBe(a.request.specKey);
      expect(c.request.specKey).not.toBe(a.request.specKey);
    }
  });
});

describe('the status answered', () => {
  it('Agent: the speaker as both daemons, times as BIRD prints them', () => {
    const s = nodeStatus(INPUT, ['Agent']);
    const d = {
      state: 'Ready',
      version: 'tsbgp 1.2.3',
      routerID: '192.0.2.1',
      lastBootTime: '2026-03-01 10:00:00',
      lastReconfigurationTime: '2026-03-01 10:00:05',
    };
    expect(s).toEqual({ agent: { birdV4: d, birdV6: d } });
    expect(nodeStatus({ ...INPUT, running: false }, ['Agent']).agent?.birdV4).toEqual({ state: 'NotReady', version: 'tsbgp 1.2.3' });
  });

  it('BGP: planned peers by family with their type, state and since, and the counts; sessions not planned are left out', () => {
    expect(nodeStatus(INPUT, ['BGP'])).toEqual({
      bgp: {
        numberEstablishedV4: 1,
        numberNotEstablishedV4: 1,
        numberEstablishedV6: 1,
        numberNotEstablishedV6: 0,
        peersV4: [
          { peerIP: '192.0.2.2', type: 'NodeMesh', state: 'Established', since: '2026-03-01 10:00:06' },
          { peerIP: '192.0.2.3', type: 'GlobalPeer', state: 'Active', since: '2026-03-01 10:00:07' },
        ],
        peersV6: [{ peerIP: '2001:db8::2', type: 'NodePeer', state: 'Established', since: '2026-03-01 10:00:08' }],
      },
    });
  });

  it('Routes: originated ones as statics, received ones as FIB when best and RIB otherwise, with their source', () => {
    expect(nodeStatus(INPUT, ['Routes'])).toEqual({
      routes: {
        routesV4: [
          { type: 'FIB', destination: '198.18.0.0/26', gateway: 'N/A', learnedFrom: { sourceType: 'Static' } },
          { type: 'RIB', destination: '198.18.1.0/26', gateway: '192.0.2.3', learnedFrom: { sourceType: 'BGPPeer', peerIP: '192.0.2.3' } },
          { type: 'FIB', destination: '198.18.1.0/26', gateway: '192.0.2.2', learnedFrom: { sourceType: 'NodeMesh', peerIP: '192.0.2.2' } },
        ],
        routesV6: [{ type: 'FIB', destination: '2001:db8:1::/64', gateway: '2001:db8::2', learnedFrom: { sourceType: 'BGPPeer', peerIP: '2001:db8::2' } }],
      },
    });
  });

  it('only the requested classes, and empty lists as null (so a merge patch clears old entries)', () => {
    const none: NodeStatusInput = { ...INPUT, sessions: [], received: [], originated: [] };
    expect(nodeStatus(none, ['BGP', 'Routes'])).toEqual({
      bgp: { numberEstablishedV4: 0, numberNotEstablishedV4: 0, numberEstablishedV6: 0, numberNotEstablishedV6: 0, peersV4: null, peersV6: null },
      routes: { routesV4: null, routesV6: null },
    });
    expect(nodeStatus(INPUT, [])).toEqual({});
  });

  it('birdTime is UTC, to the second', () => {
    expect(birdTime(new Date('2026-12-31T23:59:59.999Z'))).toBe('2026-12-31 23:59:59');
  });
});

describe('writing', () => {
  it('writes nothing when the status as it stands already says it (the server omits empty lists; lastUpdated differs)', () => {
    const next = nodeStatus({ ...INPUT, received: [] }, ['BGP', 'Routes']);
    const onServer = JSON.parse(JSON.stringify({ ...next, lastUpdated: '2020-01-01T00:00:00Z', routes: { routesV4: next.routes!.routesV4 } }));
    expect(statusPatch(onServer, next, at(60))).toBeUndefined();
  });

  it('writes the requested classes and the time when anything changed, leaving other classes alone', () => {
    const next = nodeStatus(INPUT, ['BGP']);
    const p = statusPatch({ agent: { birdV4: { state: 'Ready' } }, bgp: { numberEstablishedV4: 0 } }, next, at(61.5));
    expect(p).toEqual({ status: { ...next, lastUpdated: '2026-03-01T10:01:01Z' } });
    expect(p?.status.agent).toBeUndefined();
  });

  it('schedule: a new or changed request at once; then once per period, never for 0', () => {
    const req = { specKey: 'k1', updatePeriodSeconds: 10 };
    expect(reportSchedule(undefined, req, 0)).toEqual({ now: true, nextInMs: 10_000 });
    expect(reportSchedule({ specKey: 'k1', at: 0 }, req, 4_000)).toEqual({ now: false, nextInMs: 6_000 });
    expect(reportSchedule({ specKey: 'k1', at: 0 }, req, 10_000)).toEqual({ now: true, nextInMs: 10_000 });
    expect(reportSchedule({ specKey: 'k1', at: 0 }, { ...req, specKey: 'k2' }, 1)).toEqual({ now: true, nextInMs: 10_000 });
    expect(reportSchedule(undefined, { specKey: 'k1', updatePeriodSeconds: 0 }, 0)).toEqual({ now: true });
    expect(reportSchedule({ specKey: 'k1', at: 0 }, { specKey: 'k1', updatePeriodSeconds: 0 }, 1e9)).toEqual({ now: false });
  });
});
