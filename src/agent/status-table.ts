/** One row of `tsbgp status`, in `calicoctl node status` terms. */
export interface StatusRow {
  readonly address: string;
  readonly family: 4 | 6;
  /** `global`, `node specific` or `node-to-node mesh`. */
  readonly peerType: string;
  /** BGP FSM state, e.g. Established, Active, Idle. */
  readonly bgpState: string;
  /** When the state last changed. */
  readonly since: Date;
  /** Extra detail (last error), shown after the state. */
  readonly detail?: string;
}

/** Calico's STATE column: `up` only when Established, else `start`/`wait`/`down` as BIRD reports. */
export function stateWord(bgpState: string): string {
  switch (bgpState) {
    case 'Established':
      return 'up';
    case 'Idle':
      return 'down';
    case 'Connect':
    case 'Active':
      return 'start';
    default:
      return 'wait';
  }
}

/** Calico shows the time for today's changes and the date for older ones. */
export function sinceText(since: Date, now: Date): string {
  const sameDay = since.toISOString().slice(0, 10) === now.toISOString().slice(0, 10);
  return sameDay ? since.toISOString().slice(11, 19) : since.toISOString().slice(0, 10);
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const rule = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  const line = (cells: string[]) => `|${cells.map((c, i) => ` ${c.padEnd(widths[i])} `).join('|')}|`;
  const centred = (cells: string[]) =>
    `|${cells
      .map((c, i) => {
        const pad = widths[i] - c.length;
        return ` ${' '.repeat(Math.floor(pad / 2))}${c}${' '.repeat(Math.ceil(pad / 2))} `;
      })
      .join('|')}|`;
  return [rule, centred(header), rule, ...rows.map(line), rule].join('\n');
}

/** The `calicoctl node status` layout: one table per family, or "No IPvN peers found." */
export function renderStatus(rows: readonly StatusRow[], now: Date, processLine = 'tsbgp agent is running.'): string {
  const out: string[] = [processLine, ''];
  for (const family of [4, 6] as const) {
    out.push(`IPv${family} BGP status`);
    const mine = rows.filter((r) => r.family === family);
    if (mine.length === 0) {
      out.push(`No IPv${family} peers found.`, '');
      continue;
    }
    const cells = mine.map((r) => [r.address, r.peerType, stateWord(r.bgpState), sinceText(r.since, now), r.detail ? `${r.bgpState} ${r.detail}` : r.bgpState]);
    out.push(table(['PEER ADDRESS', 'PEER TYPE', 'STATE', 'SINCE', 'INFO'], cells), '');
  }
  return out.join('\n');
}
