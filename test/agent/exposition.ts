/** A small parser of the Prometheus text exposition format, for scraping the agent's /metrics in tests. */

export interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

export function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t) types.set(t[1], t[2]);
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    // Go's ParseFloat, which Prometheus uses, takes NaN in any case (prom-client writes "Nan").
    const value = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : m[3].toLowerCase() === 'nan' ? NaN : Number(m[3]);
    if (Number.isNaN(value) && m[3].toLowerCase() !== 'nan') throw new Error(`bad value in ${JSON.stringify(line)}`);
    samples.push({ name: m[1], labels, value });
  }
  return { samples, types };
}

export class Scrape {
  constructor(
    readonly samples: Sample[],
    readonly types: Map<string, string>,
  ) {}
  /** The value of the one series named `name` whose labels include `labels`; undefined when there is none. */
  get(name: string, labels: Record<string, string> = {}): number | undefined {
    const hits = this.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    if (hits.length > 1) throw new Error(`${hits.length} series match ${name} ${JSON.stringify(labels)}`);
    return hits[0]?.value;
  }
  series(name: string): Sample[] {
    return this.samples.filter((s) => s.name === name);
  }
}

/** Fetches and parses `url` (an agent's /metrics). */
export async function scrapeUrl(url: string): Promise<Scrape> {
  const { samples, types } = parseExposition(await (await fetch(url)).text());
  return new Scrape(samples, types);
}
