/**
 * The rtnetlink writer with its thread (route-writer.ts NetlinkWriter,
 * writer-worker.ts), for real in a namespace: a refusal in the middle of
 * many chunks carries the kernel's reason and names only its route; writes
 * begun together reach the kernel in the order they were begun; a write
 * after close fails cleanly, and one in flight when the writer is closed
 * settles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetlinkWriter } from '../../src/kernel/route-writer.js';
import type { KernelOp, KernelRoute } from '../../src/kernel/types.js';
import { formatV4 } from '../../src/net/address.js';
import { requireLab } from './require.js';
import { destroyNamespace, protocolRoutes, vethNamespace } from './shell.js';

const available = requireLab([]);
const NS = `tsbgp-i15w${process.pid}`;
const TABLE = 101;
const base = (198 << 24) | (18 << 16);
const prefixes = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `${formatV4((base + from + i) >>> 0)}/32`);
const route = (prefix: string, ...gws: string[]): KernelRoute => ({ prefix, type: 'unicast', metric: 0, nexthops: gws.map((via) => ({ via, dev: 'v0' })) });
/** Our routes in the table, by prefix (the kernel prints a /32 without its length). */
const table = () => Object.fromEntries(Object.entries(protocolRoutes(NS, { table: String(TABLE) })).map(([k, v]) => [k.includes('/') ? k : `${k}/32`, v]));

describe.skipIf(!available.ok)('NetlinkWriter with its writer thread', () => {
  beforeAll(() => vethNamespace(NS));
  afterAll(() => destroyNamespace(NS));

  const open = async () => {
    const w = new NetlinkWriter({ netns: NS, table: TABLE, protocol: 12 });
    expect(w.probe()).toBeUndefined();
    expect(await w.startThread()).toBe(true);
    expect(w.threaded).toBe(true);
    return w;
  };

  it("a refused route among thousands carries the kernel's reason, and only it; the rest is installed", async () => {
    const w = await open();
    try {
      const ps = prefixes(3000);
      const ops: KernelOp[] = ps.map((p, i) => ({ op: 'replace', route: i === 1777 ? route(p, '198.51.100.9') : route(p, '192.0.2.7', '192.0.2.8') }));
      const r = await w.write(ops);
      expect(r.uncertain).toBe(false);
      const refused = r.errors.flatMap((e, i) => (e !== undefined ? [[i, e]] : []));
      expect(refused).toEqual([[1777, 'Network is unreachable (Nexthop has invalid gateway)']]);
      const t = table();
      expect(Object.keys(t)).toHaveLength(2999);
      expect(t[ps[0]]).toEqual(['192.0.2.7', '192.0.2.8']);
      expect(t[ps[1777]]).toBeUndefined();
      const d = await w.write(ps.map((p) => ({ op: 'delete', route: route(p) })));
      // The one never installed: the kernel's "No such process", at its index.
      expect(d.errors.flatMap((e, i) => (e !== undefined ? [[i, e]] : []))).toEqual([[1777, 'No such process']]);
      expect(table()).toEqual({});
    } finally {
      w.close();
    }
  }, 60_000);

  it('writes begun together reach the kernel in the order they were begun', async () => {
    const w = await open();
    try {
      const ps = prefixes(5000, 10_000);
      // Begun without waiting: the second and third change what the first installs, the fourth deletes half.
      const a = w.write(ps.map((p) => ({ op: 'replace', route: route(p, '192.0.2.7') })));
      const b = w.write(ps.map((p) => ({ op: 'replace', route: route(p, '192.0.2.8') })));
      const c = w.write(ps.map((p) => ({ op: 'replace', route: route(p, '192.0.2.7', '192.0.2.9') })));
      const d = w.write(ps.filter((_, i) => i % 2 === 0).map((p) => ({ op: 'delete', route: route(p) })));
      const results = await Promise.all([a, b, c, d]);
      for (const r of results) expect(r.errors.filter((e) => e !== undefined)).toEqual([]);
      const t = table();
      expect(Object.keys(t)).toHaveLength(2500);
      for (let i = 0; i < ps.length; i++) expect(t[ps[i]]).toEqual(i % 2 === 0 ? undefined : ['192.0.2.7', '192.0.2.9']);
      await w.write(ps.filter((_, i) => i % 2 === 1).map((p) => ({ op: 'delete', route: route(p) })));
      expect(table()).toEqual({});
    } finally {
      w.close();
    }
  }, 60_000);

  it('a write after close fails cleanly; one in flight when the writer closes settles', async () => {
    const w = await open();
    const ps = prefixes(20_000, 20_000);
    const inFlight = w.write(ps.map((p) => ({ op: 'replace', route: route(p, '192.0.2.7') })));
    // One turn of the event loop: the write has posted its first window of chunks and waits for room.
    await new Promise<void>((r) => setImmediate(r));
    w.close();
    const outcome = await inFlight.then(
      () => 'resolved',
      (e: Error) => e.message,
    );
    expect(outcome).toBe('netlink socket closed');
    // Some chunks reached the kernel (those posted before the close), not all.
    const got = Object.keys(table()).length;
    expect(got).toBeGreaterThan(0);
    expect(got).toBeLessThan(ps.length);
    await expect(w.write([{ op: 'replace', route: route(ps[0], '192.0.2.7') }])).rejects.toThrow('netlink socket closed');
    expect(w.threaded).toBe(false);
    // Clean up what the chunks sent before the close installed (written from a fresh writer).
    const again = new NetlinkWriter({ netns: NS, table: TABLE, protocol: 12 });
    try {
      await again.write(Object.keys(table()).map((p) => ({ op: 'delete', route: route(p) })));
    } finally {
      again.close();
    }
    expect(table()).toEqual({});
  }, 60_000);
});
