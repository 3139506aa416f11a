/** PlanEvents: edge-triggered Events from the applied plan, through a recording sink. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PlanEvents } from '../../src/agent/plan-events.js';
import type { PeerRefusal } from '../../src/kubernetes/reconcile.js';
import type { DesiredEvent, EventSink } from '../../src/kubernetes/events.js';
import { stateOf } from '../../src/kubernetes/state.js';
import { bgpConfig, node, peer, planFor, slice, svc } from '../kubernetes/helpers.js';

class RecordingSink implements EventSink {
  readonly recorded: DesiredEvent[][] = [];
  flushes = 0;
  async record(events: readonly DesiredEvent[]): Promise<void> {
    this.recorded.push([...events]);
  }
  async flush(): Promise<void> {
    this.flushes++;
  }
}

const base = [
  node('worker1', '192.0.2.10'),
  bgpConfig({ asNumber: 64512, serviceExternalIPs: [{ cidr: '203.0.113.0/24' }] }),
  svc('inside', { clusterIP: '10.96.0.5', externalIPs: ['203.0.113.9'] }),
  slice('inside-1', 'inside', [{ node: 'worker1' }]),
];
const outside = [
  svc('outside', { ns: 'shop', clusterIP: '10.96.0.6', externalIPs: ['198.51.100.7'] }),
  slice('outside-1', 'outside', [{ node: 'worker1' }], { ns: 'shop' }),
];
const tor = peer('tor', { peerIP: '192.0.2.1', asNumber: 65001, password: { secretKeyRef: { name: 'bgp', key: 'tor' } } });
const agentRefusal: PeerRefusal = {
  id: 'Global_edge',
  address: '192.0.2.2',
  kind: 'BGPPeer',
  name: 'edge',
  field: 'spec.filters',
  message: 'BGPFilter f cannot be compiled',
  byPlanner: false,
};

const summary = (sink: RecordingSink) => sink.recorded.map((batch) => batch.map((e) => `${e.involved.kind}/${e.involved.name} ${e.reason}`));

describe('PlanEvents', () => {
  afterEach(() => vi.useRealTimers());

  it('records an Event when a refusal appears, not again while it lasts, and again when it comes back', async () => {
    const sink = new RecordingSink();
    const pe = new PlanEvents(sink, 'worker1');
    const step = async (resources: typeof base, refusals: PeerRefusal[] = []) => pe.update(stateOf(resources), planFor(resources, 'worker1'), refusals);
    await step(base);
    expect(sink.recorded).toEqual([]);
    await step([...base, ...outside]);
    await step([...base, ...outside]);
    await step(base);
    await step([...base, ...outside]);
    expect(summary(sink)).toEqual([['Service/outside NotAdvertised'], ['Service/outside NotAdvertised']]);
    pe.close();
  });

  it('adds the agent’s own refusals on the Node; the planner’s are in the plan already (no double Event)', async () => {
    const sink = new RecordingSink();
    const pe = new PlanEvents(sink, 'worker1');
    const resources = [...base, tor];
    const plannerRefusal: PeerRefusal = {
      id: 'Global_tor',
      address: '192.0.2.1',
      kind: 'BGPPeer',
      name: 'tor',
      field: 'spec.password',
      message: 'TCP MD5',
      byPlanner: true,
    };
    await pe.update(stateOf(resources), planFor(resources, 'worker1'), [plannerRefusal, agentRefusal]);
    const events = sink.recorded.flat();
    expect(events.map((e) => [e.involved.kind, e.involved.name, e.reason])).toEqual([
      ['Node', 'worker1', 'PeerRefused'],
      ['Node', 'worker1', 'PeerRefused'],
    ]);
    expect(events.map((e) => e.message).join('\n')).toMatch(/BGPPeer tor .*spec\.password[\s\S]*BGPPeer edge .*spec\.filters: BGPFilter f cannot be compiled/);
    pe.close();
  });

  it('flushes the sink on its interval until closed', async () => {
    vi.useFakeTimers();
    const sink = new RecordingSink();
    const pe = new PlanEvents(sink, 'worker1', 1000);
    await vi.advanceTimersByTimeAsync(3500);
    expect(sink.flushes).toBe(3);
    pe.close();
    await vi.advanceTimersByTimeAsync(5000);
    expect(sink.flushes).toBe(3);
  });
});
