/**
 * With ADD-PATH (RFC 7911) a received route is one path of its prefix,
 * named by the identifier the peer gave it: both views of what a peer sent
 * (`received`, after import, and `receivedBeforeImport`, as sent) carry it,
 * and `tsbgp routes --received` shows it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, established, link, peerStatus, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

const V4_ADDPATH = { families: ['ipv4' as const], addPath: 'both' as const };

describe('ADD-PATH path identifiers in the received views', () => {
  it('receivedBeforeImport and received both name the path identifier the peer sent', async () => {
    const router = await speaker('127.0.0.66', { asn: 65066 });
    const node = await speaker('127.0.0.67', { asn: 65066 });
    link(router, node, V4_ADDPATH, V4_ADDPATH);
    await established(node, '127.0.0.66');
    expect(peerStatus(node, '127.0.0.66').negotiated?.addPath).toEqual([{ family: 'ipv4', send: true, receive: true }]);
    router.originate('198.51.100.0/24');
    await eventually('the route at the node', () => node.receivedBeforeImport('127.0.0.66').length === 1);
    const [{ route, accepted }] = node.receivedBeforeImport('127.0.0.66');
    expect(route.pathId).toEqual(expect.any(Number));
    expect(accepted?.pathId).toBe(route.pathId);
    expect(node.received('127.0.0.66').map((r) => r.pathId)).toEqual([route.pathId]);
  });

  it('without ADD-PATH there is no identifier', async () => {
    const router = await speaker('127.0.0.68', { asn: 65068 });
    const node = await speaker('127.0.0.69', { asn: 65068 });
    link(router, node, { families: ['ipv4'] }, { families: ['ipv4'] });
    await established(node, '127.0.0.68');
    router.originate('198.51.100.0/24');
    await eventually('the route at the node', () => node.receivedBeforeImport('127.0.0.68').length === 1);
    const [{ route, accepted }] = node.receivedBeforeImport('127.0.0.68');
    expect(route.pathId).toBeUndefined();
    expect(accepted?.pathId).toBeUndefined();
  });
});
