import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type Edge,
  EXCEPTIONS,
  LAYERS,
  MAX_LINE,
  importGraph,
  importsOf,
  layerOf,
  layerViolations,
  longLines,
  runtimeCycles,
  srcLongLines,
} from '../../scripts/layers.js';

const ROOT = join(import.meta.dirname, '../..');
const edge = (from: string, to: string, typeOnly = false): Edge => ({ from, to, typeOnly, dynamic: false });

describe('the layers of DESIGN.md hold in src/', () => {
  const edges = importGraph(ROOT);

  it('no import runs up a layer, reaches into a layer past its door, or leaves src/', () => {
    // the graph is the real one (not vacuous): every layer is in it, and the agent reaches the speaker through its door
    expect(new Set(edges.map((e) => layerOf(e.from)))).toEqual(new Set([...LAYERS, 'api']));
    expect(edges.some((e) => e.from.startsWith('src/agent/') && e.to === 'src/speaker/index.ts')).toBe(true);
    expect(layerViolations(edges)).toEqual([]);
  });

  it('no runtime import cycle (type-only and dynamic imports do not run at load time, so they may close a loop)', () => {
    expect(edges.filter((e) => !e.typeOnly && !e.dynamic).length).toBeGreaterThan(300);
    expect(runtimeCycles(edges)).toEqual([]);
  });

  it('every exception is still needed (a stale one would hide the next import of its kind)', () => {
    const all = layerViolations(edges, {});
    const stale = Object.keys(EXCEPTIONS).filter((key) => {
      const [from, to] = key.split(' -> ');
      return !all.some((line) => line.startsWith(`${from} imports ${to}:`));
    });
    expect(stale).toEqual([]);
  });
});

describe('no line in src/ is wider than prettier keeps code', () => {
  it(`no src line over ${MAX_LINE} characters (long strings and comments are broken by hand)`, () => {
    expect(MAX_LINE).toBe(160);
    expect(srcLongLines(ROOT)).toEqual([]);
  });

  it('names each line over the limit with its file, number and width, counting characters, not bytes', () => {
    const ok = 'x'.repeat(MAX_LINE);
    const arrows = '→'.repeat(MAX_LINE); // 3 bytes each in UTF-8, one character
    const text = [ok, `${ok}y`, arrows, `${ok}\r`, `  '${'z'.repeat(MAX_LINE)}'`].join('\n');
    expect(longLines('src/a.ts', text)).toEqual([`src/a.ts:2: 161 characters (at most 160)`, `src/a.ts:5: ${MAX_LINE + 4} characters (at most 160)`]);
  });
});

describe('the check can fail', () => {
  it('names an import up a layer', () => {
    expect(layerViolations([edge('src/wire/open.ts', 'src/session/index.ts')])).toEqual([
      'src/wire/open.ts imports src/session/index.ts: runs up a layer (wire may not import session)',
    ]);
  });
  it('names a reach into a layer past its door, type-only imports too', () => {
    expect(layerViolations([edge('src/rib/rib.ts', 'src/wire/packer.ts')])).toEqual([
      'src/rib/rib.ts imports src/wire/packer.ts: reaches into wire; import src/wire/index.ts',
    ]);
    expect(layerViolations([edge('src/rib/rib.ts', 'src/wire/types.ts', true)])).toHaveLength(1);
    expect(layerViolations([edge('src/rib/rib.ts', 'src/wire/index.ts', true)])).toEqual([]);
  });
  it('names native code used outside the shells of session, bfd and kernel', () => {
    expect(layerViolations([edge('src/rib/rib.ts', 'src/native/index.ts')])).toEqual([
      'src/rib/rib.ts imports src/native/index.ts: native code is for the shells of session, bfd, kernel',
    ]);
    expect(layerViolations([edge('src/kernel/route-writer.ts', 'src/native/index.ts')])).toEqual([]);
  });
  it('names a module that imports its own door, the public API as a door, a path outside src/, and an unknown layer', () => {
    expect(layerViolations([edge('src/wire/open.ts', 'src/wire/index.ts')])).toEqual([
      'src/wire/open.ts imports src/wire/index.ts: inside its own layer, import the module, not the door',
    ]);
    expect(layerViolations([edge('src/agent/cli.ts', 'src/index.ts')])).toHaveLength(1);
    expect(layerViolations([edge('src/agent/cli.ts', 'test/agent/plans.ts')])).toEqual(['src/agent/cli.ts imports test/agent/plans.ts: outside src/']);
    expect(layerViolations([edge('src/util/x.ts', 'src/net/index.ts')])).toEqual(['src/util/x.ts imports src/net/index.ts: util is not a layer in DESIGN.md']);
  });
  it('an exception silences exactly its edge', () => {
    const bad = edge('src/agent/cli.ts', 'src/kubernetes/schema.ts');
    expect(layerViolations([bad], { 'src/agent/cli.ts -> src/kubernetes/schema.ts': 'why' })).toEqual([]);
    expect(layerViolations([bad], {})).toHaveLength(1);
  });
  it('names each runtime cycle once, with every file on it, and ignores loops closed by type-only or dynamic imports', () => {
    const cycles = runtimeCycles([
      edge('src/agent/views.ts', 'src/agent/peer-view.ts'),
      edge('src/agent/peer-view.ts', 'src/agent/render.ts'),
      edge('src/agent/render.ts', 'src/agent/views.ts'),
      edge('src/agent/render.ts', 'src/agent/kernel.ts'),
      edge('src/agent/metrics.ts', 'src/agent/bfd-metrics.ts'),
      edge('src/agent/bfd-metrics.ts', 'src/agent/metrics.ts'),
      edge('src/speaker/bfd.ts', 'src/speaker/peer-config.ts'),
      edge('src/speaker/peer-config.ts', 'src/speaker/bfd.ts', true),
      edge('src/agent/cli.ts', 'src/agent/main.ts'),
      { ...edge('src/agent/main.ts', 'src/agent/cli.ts'), dynamic: true },
      edge('src/net/prefix.ts', 'src/net/prefix.ts'),
    ]);
    expect(cycles).toEqual([
      ['src/net/prefix.ts'],
      ['src/agent/bfd-metrics.ts', 'src/agent/metrics.ts'],
      ['src/agent/peer-view.ts', 'src/agent/render.ts', 'src/agent/views.ts'],
    ]);
  });
  it('reads every kind of import, and tells type-only and dynamic ones apart', () => {
    const text = [
      "import { a } from '../wire/open.js';",
      "import type { B } from '../wire/types.js';",
      "import { type C, type D } from '../wire/context.js';",
      "export { e } from './e.js';",
      "import x from 'js-yaml';",
      "type F = import('../net/prefix.js').Prefix;",
      "const g = await import('../kernel/kernel-fib.js');",
    ].join('\n');
    expect(importsOf(join(ROOT, 'src/rib/rib.ts'), text, ROOT)).toEqual([
      edge('src/rib/rib.ts', 'src/wire/open.ts'),
      edge('src/rib/rib.ts', 'src/wire/types.ts', true),
      edge('src/rib/rib.ts', 'src/wire/context.ts', true),
      edge('src/rib/rib.ts', 'src/rib/e.ts'),
      edge('src/rib/rib.ts', 'src/net/prefix.ts', true),
      { ...edge('src/rib/rib.ts', 'src/kernel/kernel-fib.ts'), dynamic: true },
    ]);
  });
});
