import { mkdtemp, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { watchLayers } from '../../src/agent/sources/index.js';
import { loadManifests } from '../../src/agent/sources/manifest-files.js';
import { eventsBetween, mergeWithPrevious, parseManifestText, splitDocuments } from '../../src/kubernetes/manifests.js';
import type { ClusterEvent } from '../../src/kubernetes/state.js';
import type { ManifestIssue } from '../../src/kubernetes/validate.js';

const pool = (name: string, cidr: string) => `apiVersion: projectcalico.org/v3
kind: IPPool
metadata:
  name: ${name}
spec:
  cidr: ${cidr}
`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tsbgp-manifests-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('parseManifestText', () => {
  it('splits multi-document YAML, skips empty documents, flattens kind: List', () => {
    const text = `${pool('a', '10.0.0.0/16')}---\n---\n${pool('b', '10.1.0.0/16')}---
apiVersion: v1
kind: List
items:
  - ${pool('c', '10.2.0.0/16').replace(/\n/g, '\n    ').trimEnd()}
  - ${pool('d', '10.3.0.0/16').replace(/\n/g, '\n    ').trimEnd()}
`;
    const { objects, issues } = parseManifestText(text, 'x.yaml');
    expect(issues).toEqual([]);
    expect(objects.map((o) => (o.object as { metadata: { name: string } }).metadata.name)).toEqual(['a', 'b', 'c', 'd']);
    expect(objects.every((o) => o.file === 'x.yaml')).toBe(true);
  });
  it('reports a broken document with its file and number, keeps the good ones', () => {
    const { objects, issues } = parseManifestText(`${pool('a', '10.0.0.0/16')}---\nkind: [unclosed\n---\n${pool('b', '10.1.0.0/16')}`, 'y.yaml');
    expect(objects).toHaveLength(2);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ severity: 'error', file: 'y.yaml', message: expect.stringMatching(/^YAML document 2: .* at line 9, column \d+$/) });
  });
});

describe('parseManifestText: documents, positions, aliases (js-yaml, cut into documents here)', () => {
  it("cuts at --- and after ... lines; comments and directives stay with the next document; line numbers are the text's", () => {
    const text = '# header\n%YAML 1.2\n---\na: 1\n--- {b: 2}\n...\nc: 3\n---\n  ---indented: x\n';
    expect(splitDocuments(text)).toEqual([
      { text: '# header\n%YAML 1.2\n---\na: 1', line: 1 },
      { text: '--- {b: 2}\n...', line: 5 },
      { text: 'c: 3', line: 7 },
      { text: '---\n  ---indented: x\n', line: 8 },
    ]);
    const { objects, issues, documents } = parseManifestText(text, 'd.yaml');
    expect(issues).toEqual([]);
    expect(documents).toBe(4);
    expect(objects.map((o) => o.object)).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }, { '---indented': 'x' }]);
  });
  it('an error names the document and the line and column in the whole file; the other documents still load', () => {
    const text = `${pool('a', '10.0.0.0/16')}---\nkind: IPPool\nmetadata:\n  name: b\n   bad: indent\n---\n${pool('c', '10.2.0.0/16')}`;
    const { objects, issues } = parseManifestText(text, 'e.yaml');
    expect(objects.map((o) => (o.object as { metadata: { name: string } }).metadata.name)).toEqual(['a', 'c']);
    expect(issues).toEqual([{ severity: 'error', file: 'e.yaml', message: expect.stringMatching(/^YAML document 2: .* at line 11, column \d+$/) }]);
    const dup = parseManifestText('kind: IPPool\nkind: Node\n', 'f.yaml');
    expect(dup.issues).toEqual([
      { severity: 'error', file: 'f.yaml', message: expect.stringMatching(/^YAML document 1: duplicated mapping key at line 2, column 1$/) },
    ]);
  });
  it('YAML 1.2 core schema: dates and yes/no stay strings, numbers and booleans are typed, as before', () => {
    const { objects } = parseManifestText('a: 2001-12-14\nb: yes\nc: 0x1F\nd: true\ne: ~\nf: "1"\n', 'g.yaml');
    expect(objects[0].object).toEqual({ a: '2001-12-14', b: 'yes', c: 31, d: true, e: null, f: '1' });
  });
  it('refuses a document whose aliases expand beyond reason ("billion laughs"), keeps modest aliases', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      ...Array.from(
        { length: 8 },
        (_, k) =>
          `${String.fromCharCode(98 + k)}: &${String.fromCharCode(98 + k)} [${Array(10)
            .fill(`*${String.fromCharCode(97 + k)}`)
            .join(',')}]`,
      ),
    ].join('\n');
    const { objects, issues } = parseManifestText(`${pool('ok', '10.0.0.0/16')}---\n${bomb}\n`, 'h.yaml');
    expect(objects).toHaveLength(1);
    expect(issues).toEqual([
      { severity: 'error', file: 'h.yaml', message: expect.stringMatching(/^YAML document 2: its aliases expand to more than 10 values per character/) },
    ]);
    const modest = parseManifestText('base: &l {app: web}\none: *l\ntwo: *l\n', 'i.yaml');
    expect(modest.issues).toEqual([]);
    expect(modest.objects[0].object).toEqual({ base: { app: 'web' }, one: { app: 'web' }, two: { app: 'web' } });
  });
});

describe('parseManifestText on JSON', () => {
  const items = [0, 1, 2].map((i) => ({
    apiVersion: 'projectcalico.org/v3',
    kind: 'IPPool',
    metadata: { name: `p${i}`, labels: { a: 'x:y', n: '1' } },
    spec: { cidr: `10.${i}.0.0/16`, disabled: i === 1 },
  }));
  it('a JSON text gives the same objects as the YAML parser gives for it', () => {
    for (const text of [JSON.stringify({ apiVersion: 'v1', kind: 'List', items }), JSON.stringify(items[0], null, 2), `  \n${JSON.stringify(items[2])}\n`]) {
      const viaYaml = parseAllDocuments(text).map((d) => d.toJS());
      const expected = viaYaml[0].kind === 'List' ? viaYaml[0].items : viaYaml;
      const { objects, issues } = parseManifestText(text, 'x.json');
      expect(issues).toEqual([]);
      expect(objects.map((o) => o.object)).toEqual(expected);
    }
  });
  it('text that only looks like JSON goes to the YAML parser: flow mappings parse, broken text is reported with a position', () => {
    expect(parseManifestText('{kind: IPPool, metadata: {name: flow}}', 'f.yaml').objects.map((o) => o.object)).toEqual([
      { kind: 'IPPool', metadata: { name: 'flow' } },
    ]);
    const { objects, issues } = parseManifestText('{"kind": "IPPool", "metadata": {"name": "x"}', 'b.json');
    expect(objects).toEqual([]);
    expect(issues).toEqual([
      expect.objectContaining({ severity: 'error', file: 'b.json', message: expect.stringMatching(/^YAML document 1: .*line 1, column \d+$/) }),
    ]);
  });
});

describe('loadManifests', () => {
  it('loads a folder recursively (yaml/yml/json, sorted), with file names on resources and errors', async () => {
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'a.yaml'), pool('a', '10.0.0.0/16'));
    await writeFile(join(dir, 'sub', 'b.yml'), `${pool('b', '10.1.0.1/16')}---\n${pool('c', '10.2.0.0/16')}`);
    await writeFile(
      join(dir, 'sub', 'd.json'),
      JSON.stringify({ apiVersion: 'projectcalico.org/v3', kind: 'IPPool', metadata: { name: 'd' }, spec: { cidr: '10.3.0.0/16' } }),
    );
    await writeFile(join(dir, 'notes.txt'), 'not a manifest');
    const r = await loadManifests([dir]);
    expect(r.resources.map((x) => x.name)).toEqual(['a', 'c', 'd']);
    expect(r.files.get('IPPool/c')).toBe(join(dir, 'sub', 'b.yml'));
    expect(r.issues).toEqual([expect.objectContaining({ file: join(dir, 'sub', 'b.yml'), kind: 'IPPool', name: 'b', path: 'spec.cidr' })]);
    expect(r.invalidKeys).toEqual(new Set(['IPPool/b']));
  });
  it('a missing path is an error naming it', async () => {
    const r = await loadManifests([join(dir, 'nope')]);
    expect(r.issues).toEqual([expect.objectContaining({ severity: 'error', file: join(dir, 'nope'), message: 'cannot read: ENOENT' })]);
  });
});

describe('an invalid edit never replaces a valid running configuration', () => {
  it('mergeWithPrevious keeps the last valid version of a resource whose new definition is invalid', async () => {
    const f = join(dir, 'pools.yaml');
    await writeFile(f, `${pool('a', '10.0.0.0/16')}---\n${pool('b', '10.1.0.0/16')}`);
    const first = mergeWithPrevious(new Map(), await loadManifests([dir]));
    await writeFile(f, `${pool('a', '10.0.0.1/16')}---\n${pool('b', '10.9.0.0/16')}`);
    const second = mergeWithPrevious(first, await loadManifests([dir]));
    const cidr = (m: typeof second, k: string) => {
      const r = m.get(k)?.resource;
      return r?.kind === 'IPPool' ? r.cidr.toString() : undefined;
    };
    expect([cidr(second, 'IPPool/a'), cidr(second, 'IPPool/b')]).toEqual(['10.0.0.0/16', '10.9.0.0/16']);
    expect(eventsBetween(first, second).map((e) => [e.type, e.type === 'delete' ? e.name : e.resource.name])).toEqual([['update', 'b']]);
    // A file that stops parsing keeps everything it defined; removing it deletes them.
    await writeFile(f, 'kind: [broken');
    const third = mergeWithPrevious(second, await loadManifests([dir]));
    expect([...third.keys()].sort()).toEqual(['IPPool/a', 'IPPool/b']);
    await rm(f);
    const fourth = mergeWithPrevious(third, await loadManifests([dir]));
    expect(eventsBetween(third, fourth)).toEqual([
      { type: 'delete', kind: 'IPPool', name: 'a', namespace: undefined },
      { type: 'delete', kind: 'IPPool', name: 'b', namespace: undefined },
    ]);
  });

  it('watching a single file survives an editor saving by rename', async () => {
    const f = join(dir, 'one.yaml');
    await writeFile(f, pool('a', '10.0.0.0/16'));
    const seen: ClusterEvent[][] = [];
    let wake: () => void = () => {};
    const w = await watchLayers([f], { debounceMs: 20, onChange: (events) => (seen.push(events), wake()) });
    try {
      const waiting = new Promise<void>((res) => (wake = res));
      await writeFile(join(dir, '.one.yaml.tmp'), pool('a', '10.7.0.0/16'));
      const { rename } = await import('node:fs/promises');
      await rename(join(dir, '.one.yaml.tmp'), f);
      await waiting;
      const now = w.current.get('IPPool/a')!.resource;
      expect(now.kind === 'IPPool' && now.cidr.toString()).toBe('10.7.0.0/16');
      expect(seen.at(-1)!.map((e) => e.type)).toEqual(['update']);
    } finally {
      w.close();
    }
  });

  it('a watched layer reloads after a debounced change and keeps the valid version on a bad edit', async () => {
    const f = join(dir, 'pools.yaml');
    await writeFile(f, pool('a', '10.0.0.0/16'));
    const calls: { events: ClusterEvent[]; issues: ManifestIssue[] }[] = [];
    let wake: () => void = () => {};
    const w = await watchLayers([dir], {
      debounceMs: 30,
      onChange: (events, issues) => {
        calls.push({ events, issues });
        wake();
      },
    });
    const next = () => new Promise<void>((res) => (wake = res));
    try {
      expect(calls).toHaveLength(1);
      expect(calls[0].events.map((e) => e.type)).toEqual(['add']);
      // Written whole (temporary file, then rename): a reload between a plain writeFile's
      // truncation and its write would see an empty file, a fault of its own.
      const save = async (text: string) => {
        await writeFile(`${f}.tmp`, text);
        await rename(`${f}.tmp`, f);
      };
      let waiting = next();
      await save(pool('a', '10.0.0.1/16'));
      await waiting;
      const bad = calls.at(-1)!;
      expect(bad.events).toEqual([]);
      expect(bad.issues[0]).toMatchObject({ kind: 'IPPool', name: 'a', path: 'spec.cidr' });
      const kept = w.current.get('IPPool/a')!.resource;
      expect(kept.kind === 'IPPool' && kept.cidr.toString()).toBe('10.0.0.0/16');
      waiting = next();
      await save(pool('a', '10.5.0.0/16'));
      await waiting;
      const good = calls.at(-1)!;
      expect(good.events.map((e) => e.type)).toEqual(['update']);
      const now = w.current.get('IPPool/a')!.resource;
      expect(now.kind === 'IPPool' && now.cidr.toString()).toBe('10.5.0.0/16');
    } finally {
      w.close();
    }
  });

  /** Watches `paths`; `changed(pred)` waits until the running set satisfies pred (or fails after 3 s). */
  async function watching(paths: string[]) {
    let wake: () => void = () => {};
    const w = await watchLayers(paths, { debounceMs: 20, onChange: () => wake() });
    const cidrOf = (name: string) => {
      const r = w.current.get(`IPPool/${name}`)?.resource;
      return r?.kind === 'IPPool' ? r.cidr.toString() : undefined;
    };
    const until = async (what: string, pred: () => boolean) => {
      const deadline = Date.now() + 3_000;
      while (!pred()) {
        if (Date.now() > deadline) throw new Error(`watch did not see: ${what}`);
        await Promise.race([new Promise<void>((res) => (wake = res)), new Promise((res) => setTimeout(res, 100))]);
      }
    };
    return { w, cidrOf, until };
  }

  it.each([
    ['a temporary file beside it', '.'],
    ['a temporary file in another folder (Node 20’s recursive watch saw only the first)', '../elsewhere'],
  ])('a folder watch sees every save by rename of the same file: %s', async (_label, tmpDir) => {
    const f = join(dir, 'conf', 'pools.yaml');
    await mkdir(join(dir, 'conf'));
    await mkdir(join(dir, 'elsewhere'));
    await writeFile(f, pool('a', '10.0.0.0/16'));
    const { w, cidrOf, until } = await watching([join(dir, 'conf')]);
    try {
      for (const n of [1, 2, 3, 4]) {
        const tmp = join(dir, 'conf', tmpDir, '.pools.yaml.tmp');
        await writeFile(tmp, pool('a', `10.${n}.0.0/16`));
        await rename(tmp, f);
        await until(`save ${n}`, () => cidrOf('a') === `10.${n}.0.0/16`);
        expect(cidrOf('a')).toBe(`10.${n}.0.0/16`);
      }
    } finally {
      w.close();
    }
  });

  it('a folder watch covers subfolders created after it started, and files saved by rename in them', async () => {
    const { w, cidrOf, until } = await watching([dir]);
    try {
      await mkdir(join(dir, 'later'));
      await writeFile(join(dir, 'later', 'p.yaml'), pool('b', '10.8.0.0/16'));
      await until('new subfolder', () => cidrOf('b') === '10.8.0.0/16');
      await writeFile(join(dir, 'later', '.tmp'), pool('b', '10.9.0.0/16'));
      await rename(join(dir, 'later', '.tmp'), join(dir, 'later', 'p.yaml'));
      await until('rename in the subfolder', () => cidrOf('b') === '10.9.0.0/16');
      expect(cidrOf('b')).toBe('10.9.0.0/16');
    } finally {
      w.close();
    }
  });

  it('a ConfigMap volume: the kubelet swaps the ..data symlink to a new folder, every time', async () => {
    // The layout kubelet writes: name.yaml -> ..data/name.yaml, ..data -> ..<timestamp>/ (hidden, not read twice).
    const version = async (n: number) => {
      const d = join(dir, `..v${n}`);
      await mkdir(d);
      await writeFile(join(d, 'pools.yaml'), pool('c', `10.${20 + n}.0.0/16`));
      await symlink(`..v${n}`, join(dir, '..data_tmp'));
      await rename(join(dir, '..data_tmp'), join(dir, '..data'));
      if (n > 0) await rm(join(dir, `..v${n - 1}`), { recursive: true });
    };
    await version(0);
    await symlink('..data/pools.yaml', join(dir, 'pools.yaml'));
    const { w, cidrOf, until } = await watching([dir]);
    try {
      expect(cidrOf('c')).toBe('10.20.0.0/16');
      for (const n of [1, 2, 3]) {
        await version(n);
        await until(`ConfigMap update ${n}`, () => cidrOf('c') === `10.${20 + n}.0.0/16`);
      }
      expect(cidrOf('c')).toBe('10.23.0.0/16');
    } finally {
      w.close();
    }
  });
});
