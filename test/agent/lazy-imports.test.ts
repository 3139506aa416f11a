import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The agent's footprint (docs/agent-memory.md): the heavy runtime packages
 * load only when a flag needs them, through a dynamic `import()`. This walks
 * the static imports (type-only ones are erased) from the entry points the
 * CLI runs and names the chain that pulls a heavy package in.
 */
const ROOT = join(import.meta.dirname, '../..');
/** Package → what needs it; each is worth many MB of RSS (docs/agent-memory.md). */
const LAZY: Record<string, string> = {
  'prom-client': '--metrics',
};

/** Static value imports and re-exports of a TypeScript file (not `import type`, not `import()`). */
function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  const re = /^\s*(?:import|export)\s+(?!type\s)(?:[^'"`;]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push(m[1]);
  return out;
}

/** Every file and package reachable by static imports from `entry`, each with the chain that reaches it. */
function reach(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>([[entry, [entry]]]);
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const spec of staticImports(join(ROOT, file))) {
      const target = spec.startsWith('.')
        ? relative(ROOT, join(dirname(join(ROOT, file)), spec)).replace(/\.js$/, '.ts')
        : spec.startsWith('node:')
          ? undefined
          : spec
              .split('/')
              .slice(0, spec.startsWith('@') ? 2 : 1)
              .join('/');
      if (target === undefined || seen.has(target)) continue;
      seen.set(target, [...seen.get(file)!, target]);
      if (spec.startsWith('.')) queue.push(target);
    }
  }
  return seen;
}

describe('what the agent loads at start', () => {
  it('the CLI reaches no heavy package by static imports: each loads only with the flag that needs it', () => {
    const seen = reach('src/agent/main.ts');
    // the walk covers the agent (not vacuous): its loop, the speaker, the manifest parser
    expect(seen.has('src/agent/agent.ts')).toBe(true);
    expect(seen.has('src/speaker/speaker.ts')).toBe(true);
    expect(seen.has('js-yaml')).toBe(true);
    for (const [pkg, flag] of Object.entries(LAZY)) {
      expect(seen.get(pkg)?.join(' → '), `${pkg} (only for ${flag}) is imported statically`).toBeUndefined();
    }
  });
  it('the walk does find a package imported statically (the check can fail)', () => {
    const seen = reach('src/agent/metrics.ts');
    expect(seen.get('prom-client')).toEqual(['src/agent/metrics.ts', 'prom-client']);
  });
});
