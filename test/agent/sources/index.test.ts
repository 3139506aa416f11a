import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { watchLayers, type LayerWatcher } from '../../../src/agent/sources/index.js';
import type { ResourceEvent } from '../../../src/kubernetes/state.js';

const pool = (name: string, cidr: string) => ({ apiVersion: 'projectcalico.org/v3', kind: 'IPPool', metadata: { name }, spec: { cidr } });
const text = (...objs: object[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objs });
const brief = (evs: ResourceEvent[]) =>
  evs.map((e) => (e.type === 'delete' ? `delete ${e.name}` : `${e.type} ${e.resource.name} ${e.resource.kind === 'IPPool' ? e.resource.cidr : ''}`));

let dir: string;
let w: LayerWatcher | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tsbgp-layers-'));
});
afterEach(async () => {
  w?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('watchLayers', () => {
  it('reports only what a layer edit changes in the combined set: the topmost layer holding a key wins', async () => {
    const base = join(dir, 'base');
    const over = join(dir, 'overlay.json');
    await mkdir(base);
    await writeFile(join(base, 'pools.json'), text(pool('a', '10.0.0.0/16'), pool('b', '10.1.0.0/16')));
    await writeFile(over, text());
    const seen: ResourceEvent[][] = [];
    let wake: () => void = () => {};
    w = await watchLayers([base, over], { debounceMs: 10, onChange: (events) => (seen.push(events), wake()) });
    const change = async (file: string, body: string) => {
      const waiting = new Promise<void>((r) => (wake = r));
      // Written whole (temporary file, then rename): a reload between the truncation and the
      // write of a plain writeFile would see an empty file, a fault of its own (manifest-faults.test.ts).
      await writeFile(`${file}.tmp`, body);
      await rename(`${file}.tmp`, file);
      await waiting;
      return brief(seen.at(-1)!);
    };
    expect(brief(seen[0])).toEqual(['add a 10.0.0.0/16', 'add b 10.1.0.0/16']);
    // The overlay shadows a and adds c.
    expect(await change(over, text(pool('c', '10.2.0.0/16'), pool('a', '10.9.0.0/16')))).toEqual(['update a 10.9.0.0/16', 'add c 10.2.0.0/16']);
    // A base edit under a shadowed key changes nothing; another key of the same file does.
    expect(await change(join(base, 'pools.json'), text(pool('a', '10.7.0.0/16'), pool('b', '10.8.0.0/16')))).toEqual(['update b 10.8.0.0/16']);
    // The overlay lets go of a: the base's current version shows through; c goes.
    expect(await change(over, text())).toEqual(['update a 10.7.0.0/16', 'delete c']);
    expect([...w.current.keys()].sort()).toEqual(['IPPool/a', 'IPPool/b']);
    // Deleting from the base, and rewriting the overlay with what it had, report nothing twice.
    expect(await change(join(base, 'pools.json'), text(pool('a', '10.7.0.0/16')))).toEqual(['delete b']);
    expect(await change(over, text())).toEqual([]);
  });
});
