import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { BEGIN, END, latestTables, parseResults, perfReadme, renderSection, replaceSection, TARGET, type RecordedTable } from '../../scripts/perf-readme.js';

const table = (over: Partial<RecordedTable>): RecordedTable => ({
  suite: 'codec',
  title: 'Codec: a full-table UPDATE stream',
  columns: ['operation', 'ns per prefix'],
  rows: [['decode IPv4', 31.5]],
  quick: false,
  machine: 'node v20, Test CPU × 2',
  at: '2026-12-03T06:40:00.000Z',
  command: 'npm run bench -- codec',
  ...over,
});
const jsonl = (...ts: object[]) => ts.map((t) => JSON.stringify(t)).join('\n') + '\n';

const README = `# x\n\nintro\n\n## Performance\n\n${BEGIN}\nold text\n${END}\n\n## After\n\nkept\n`;

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'tsbgp-perf-readme-'));
  await mkdir(join(root, 'bench', 'results'), { recursive: true });
  await mkdir(join(root, 'docs'));
  await writeFile(join(root, TARGET), README);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('perf-readme', () => {
  it('keeps full-run tables only, the last of each suite and title, in scenario order', () => {
    const text = jsonl(
      table({ suite: 'memory', title: 'Memory', rows: [['1 session', 41]] }),
      table({ rows: [['decode IPv4', 99]] }),
      table({ rows: [['decode IPv4', 31.5]], at: '2026-12-03T06:50:00.000Z' }),
      table({ suite: 'agent-reconcile', title: 'Agent', rows: [['p99', 4.3]], quick: true }),
    );
    const { tables, problems } = parseResults(`${text}not json\n{"suite":"x"}\n`, 'b.jsonl');
    expect(problems).toEqual([expect.stringMatching(/^b\.jsonl:5: not JSON/), 'b.jsonl:6: not a benchmark table (needs suite, title, columns, rows)']);
    const latest = latestTables(tables);
    expect(latest.map((t) => [t.suite, t.rows[0][1]])).toEqual([
      ['codec', 31.5],
      ['memory', 41],
    ]);
  });

  it("takes a suite's tables from its last run only: a table an earlier run had under another title is gone", () => {
    const { tables } = parseResults(
      jsonl(
        table({ suite: 'speaker-originate', title: 'Originate 100,000 routes', run: 'a' }),
        table({ suite: 'speaker-originate', title: 'Originate, second table', run: 'a' }),
        table({ suite: 'codec', run: 'b' }),
        table({ suite: 'speaker-originate', title: 'Originate 50,000 routes', run: 'c' }),
        table({ suite: 'speaker-originate', title: 'Originate, second table', run: 'c', rows: [['x', 2]] }),
        table({ suite: 'speaker-originate', title: 'Originate 10,000 routes', run: 'd', quick: true }),
      ),
      'b.jsonl',
    );
    expect(latestTables(tables).map((t) => [t.suite, t.title, t.run])).toEqual([
      ['codec', 'Codec: a full-table UPDATE stream', 'b'],
      ['speaker-originate', 'Originate 50,000 routes', 'c'],
      ['speaker-originate', 'Originate, second table', 'c'],
    ]);
  });

  it('renders each source with its command, date and machine, and says what was not measured', () => {
    const { section, problems, tables } = renderSection(
      [
        {
          file: 'bench/results/bench.jsonl',
          command: 'npm run bench',
          heading: 'In process',
          text: jsonl(
            table({}),
            table({ suite: 'trie', title: 'Trie', rows: [['lookup', 14.47]], at: '2026-12-03T07:02:00.000Z', command: 'node --import tsx bench/trie.ts' }),
          ),
        },
        { file: 'bench/results/lab.jsonl', command: 'npm run bench:lab', heading: 'Lab', text: undefined },
      ],
      'npm run perf:readme',
    );
    expect(tables).toBe(2);
    expect(section).toContain('### In process');
    expect(section).toContain(
      'Command: `npm run bench`. Measured 2026-12-03 06:40 – 07:02 UTC, on node v20, Test CPU × 2. Source: `bench/results/bench.jsonl`.',
    );
    expect(section).toContain('#### Codec: a full-table UPDATE stream\n\n| operation | ns per prefix |\n|---|---|\n| decode IPv4 | 31.5 |');
    expect(section).toContain('| lookup | 14.5 |');
    // A table the runner made needs no command of its own; one made by hand says how.
    expect(section.match(/Made with `[^`]*`/g)).toEqual(['Made with `node --import tsx bench/trie.ts`']);
    expect(section).toContain('Not measured: `bench/results/lab.jsonl` was not there');
    expect(problems).toEqual(['bench/results/lab.jsonl not found: run `npm run bench:lab` to measure these; left out']);
  });

  it('replaces only the text between the markers, and refuses a README without them', () => {
    const out = replaceSection(README, 'new');
    expect(out).toBe(README.replace('old text', 'new'));
    expect(() => replaceSection('# no markers\n', 'x')).toThrow(/no <!-- perf:begin -->/);
  });

  it('writes docs/performance.md from the files, checks it, and leaves it alone when there is nothing to show', async () => {
    expect(TARGET).toBe('docs/performance.md');
    const logs: string[] = [];
    const log = (l: string) => void logs.push(l);
    expect(perfReadme({ root, log })).toBe(1);
    expect(await readFile(join(root, TARGET), 'utf8')).toBe(README);
    expect(logs).toContain('perf-readme: no benchmark tables found; docs/performance.md left as it is');

    await writeFile(join(root, 'bench', 'results', 'bench.jsonl'), jsonl(table({}), table({ suite: 'memory', title: 'Smoke table', quick: true })));
    expect(perfReadme({ root, log, check: true })).toBe(1);
    expect(perfReadme({ root, log })).toBe(0);
    expect(logs).toContain('perf-readme: docs/performance.md is out of date: run `npm run perf:readme`');
    const readme = await readFile(join(root, TARGET), 'utf8');
    expect(readme).toContain('| decode IPv4 | 31.5 |');
    expect(readme).not.toContain('old text');
    expect(readme).not.toContain('Smoke table');
    expect(readme.endsWith(`${END}\n\n## After\n\nkept\n`)).toBe(true);
    expect(perfReadme({ root, log, check: true })).toBe(0);
  });
});

describe('the README performance summary', () => {
  const repo = fileURLToPath(new URL('../..', import.meta.url));
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const doc = readFileSync(join(repo, TARGET), 'utf8');
  const summary = readme.slice(readme.indexOf('## Performance'), readme.indexOf('\n## ', readme.indexOf('## Performance') + 1));

  it('holds no generated tables, and links to docs/performance.md', () => {
    expect(readme).not.toContain(BEGIN);
    expect(summary).toContain('](docs/performance.md)');
  });

  it('quotes only figures that the generated document holds (each ratio, and each figure beside it)', () => {
    const ratios = summary.match(/\d+\.\d+×/g) ?? [];
    expect(ratios.length).toBeGreaterThan(3);
    const generated = doc.slice(doc.indexOf(BEGIN), doc.indexOf(END));
    for (const r of ratios) expect(generated, r).toContain(` ${r} `);
    for (const [, a, b] of summary.matchAll(/\*\*([\d.]+) s\*\* \(BIRD ([\d.]+) s/g))
      expect(generated).toMatch(new RegExp(`\\| ${a.replace('.', '\\.')} \\| ${b.replace('.', '\\.')} \\|`));
  });
});
