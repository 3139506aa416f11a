/**
 * Drain, restart and upgrade under traffic (issue 29 part 4), the short form
 * of `npm run bench:lab -- drain` (docs/drain-lab.md): the lab of
 * drain-traffic.ts with a 5 s drain time (r1 converges in well under a
 * second; the test waits on the agents' exits and on r1's sessions and
 * ECMP, never on a guessed delay) and nodes down for 2 s.
 *
 * Checked: with tsbgp, not one datagram lost in a drain (`tsbgp drain`,
 * then stop) nor in a rolling restart of every node; with BIRD as Calico
 * runs it (SIGTERM, no drain), the same rolling restart loses at least as
 * many. Each scenario first checks that every node answers its share.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAEMON_LABEL, DrainLab, SCENARIO_LABEL, type Daemon, type ScenarioResult } from './drain-traffic.js';
import { requireLab } from './require.js';

const available = requireLab(['frr', 'bird', 'bridge', 'host'], { binaries: ['node'] });
const DRAIN_SECONDS = 5;
const DOWN_SECONDS = 2;

describe.skipIf(!available.ok)('traffic to a Service over ECMP while nodes drain, restart and leave', () => {
  const results: ScenarioResult[] = [];
  const lost = (d: Daemon, s: ScenarioResult['scenario']) => results.find((r) => r.daemon === d && r.scenario === s)?.lost;

  afterAll(() => {
    if (results.length)
      console.log(
        `drain lab (drain ${DRAIN_SECONDS} s, nodes down ${DOWN_SECONDS} s), datagrams lost:\n${results
          .map((r) => `  ${DAEMON_LABEL[r.daemon]}: ${SCENARIO_LABEL[r.scenario]}: ${r.lost} of ${r.sent} (${r.seconds.toFixed(0)} s)`)
          .join('\n')}`,
      );
  });

  describe('tsbgp agents', () => {
    let lab: DrainLab;
    beforeAll(async () => {
      lab = await DrainLab.up({ daemon: 'tsbgp', drainSeconds: DRAIN_SECONDS, downSeconds: DOWN_SECONDS, log: console.log });
    }, 180_000);
    afterAll(() => lab?.teardown());

    it('drain one node (`tsbgp drain`, then stop it): no datagram lost', async () => {
      const r = await lab.scenario('drain');
      results.push(r);
      expect(Object.keys(r.before).sort()).toEqual(['node1', 'node2', 'node3']);
      expect(r.sent).toBeGreaterThan(0);
      expect(r.lostSeqs).toEqual([]);
      expect(r.lost).toBe(0);
    }, 180_000);

    it('rolling restart of every node (SIGTERM: drain, then exit): no datagram lost', async () => {
      const r = await lab.scenario('rolling-restart');
      results.push(r);
      expect(r.sent).toBeGreaterThan(0);
      expect(r.lostSeqs).toEqual([]);
      expect(r.lost).toBe(0);
    }, 300_000);
  });

  describe('BIRD as Calico configures it (SIGTERM, no drain)', () => {
    let lab: DrainLab;
    beforeAll(async () => {
      lab = await DrainLab.up({ daemon: 'bird', drainSeconds: DRAIN_SECONDS, downSeconds: DOWN_SECONDS, log: console.log });
    }, 180_000);
    afterAll(() => lab?.teardown());

    it('rolling restart of every node: loses at least as many as tsbgp', async () => {
      const r = await lab.scenario('rolling-restart');
      results.push(r);
      expect(Object.keys(r.before).sort()).toEqual(['node1', 'node2', 'node3']);
      expect(r.sent).toBeGreaterThan(0);
      expect(lost('tsbgp', 'rolling-restart')).toBeDefined();
      expect(r.lost).toBeGreaterThanOrEqual(lost('tsbgp', 'rolling-restart')!);
    }, 300_000);
  });
});
