/**
 * A `node --cpu-prof` profile in a few lines: busy time (all but idle),
 * inclusive time of named functions (a sample counts once however deep the
 * name recurs), garbage collection, and the heaviest functions by self time.
 *
 *   node --import tsx bench/cpuprofile-summary.ts FILE.cpuprofile [--top N] [--fn name,name,...]
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv.splice(i, 2)[1] : undefined;
};
const top = Number(opt('--top') ?? 15);
const fns = (opt('--fn') ?? 'pump,decodeUpdate,decodeAttributeBlock,lookupOrCreate,ingest,flushDue,exportFor').split(',');
for (const file of argv) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const incl = new Map<string, number>(fns.map((f) => [f, 0]));
  let busy = 0;
  let gc = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    const n = byId.get(p.samples[i])!;
    const name = n.callFrame.functionName;
    if (name === '(idle)' || name === '(program)') continue;
    busy += dt;
    if (name === '(garbage collector)') gc += dt;
    const where = `${name || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(src|bench|test|dist)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
    self.set(where, (self.get(where) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)!.callFrame.functionName;
      if (incl.has(f) && !seen.has(f)) {
        seen.add(f);
        incl.set(f, incl.get(f)! + dt);
      }
    }
  }
  console.log(`${file}: busy ${busy.toFixed(0)} ms, GC ${gc.toFixed(0)} ms`);
  for (const [f, ms] of incl) console.log(`  inclusive ${f}: ${ms.toFixed(0)} ms`);
  for (const [w, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  self ${ms.toFixed(0).padStart(5)} ms  ${w}`);
}
