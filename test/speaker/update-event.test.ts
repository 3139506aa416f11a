/**
 * `updateReceived`: one event per UPDATE taken into the RIB, however many
 * routes it carries or withdraws (what the agent listens to, rather than a
 * route built per prefix).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, established, link, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

describe('updateReceived', () => {
  it('fires once per UPDATE with the sending peer, for announcements and withdrawals alike', async () => {
    const router = await speaker('127.0.0.70', { asn: 65070 });
    const node = await speaker('127.0.0.71', { asn: 65071 });
    const seen: string[] = [];
    node.on('updateReceived', (peer) => seen.push(peer));
    link(router, node, { families: ['ipv4'] }, { families: ['ipv4'] });
    await established(node, '127.0.0.70');
    // 200 prefixes with one attribute set: one UPDATE (they fit in 4,096 bytes), not 200 events.
    for (let i = 0; i < 200; i++) router.originate(`198.51.${100 + (i >> 8)}.${i & 255}/32`);
    await eventually('200 routes', () => node.received('127.0.0.70').length === 200);
    expect(seen).toEqual(['127.0.0.70']);
    for (let i = 0; i < 200; i++) router.withdraw(`198.51.${100 + (i >> 8)}.${i & 255}/32`);
    await eventually('withdrawn', () => node.received('127.0.0.70').length === 0);
    expect(seen).toEqual(['127.0.0.70', '127.0.0.70']);
  });
});
