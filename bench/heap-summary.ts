/**
 * What a V8 heap snapshot holds, summed by node type and constructor name
 * (self sizes), largest first: the breakdown behind docs/agent-memory.md.
 * Snapshots come from `bench/agent-scale.ts --snapshot DIR`.
 *
 *   node --max-old-space-size=8192 --import tsx bench/heap-summary.ts FILE.heapsnapshot [--top 25]
 */
import { readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) throw new Error('usage: heap-summary.ts FILE.heapsnapshot [--top N]');
const topArg = process.argv.indexOf('--top');
const TOP = topArg >= 0 ? Number(process.argv[topArg + 1]) : 25;

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}
const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
const fields = snap.snapshot.meta.node_fields;
const types = snap.snapshot.meta.node_types[0];
const F = fields.length;
const iType = fields.indexOf('type');
const iName = fields.indexOf('name');
const iSize = fields.indexOf('self_size');

const by = new Map<string, { size: number; count: number }>();
let total = 0;
for (let i = 0; i < snap.nodes.length; i += F) {
  const type = types[snap.nodes[i + iType]];
  const size = snap.nodes[i + iSize];
  total += size;
  // Objects by constructor; strings, code, arrays and the rest by their type.
  const key = type === 'object' || type === 'closure' || type === 'native' ? `${type} ${snap.strings[snap.nodes[i + iName]].slice(0, 60)}` : type;
  const e = by.get(key) ?? { size: 0, count: 0 };
  e.size += size;
  e.count++;
  by.set(key, e);
}
console.log(`${file}: ${(total / 1e6).toFixed(1)} MB in ${(snap.nodes.length / F).toLocaleString('en-US')} objects`);
console.log('| what | MB | objects |\n|---|---|---|');
for (const [k, e] of [...by.entries()].sort((a, b) => b[1].size - a[1].size).slice(0, TOP)) {
  console.log(`| ${k} | ${(e.size / 1e6).toFixed(2)} | ${e.count.toLocaleString('en-US')} |`);
}
