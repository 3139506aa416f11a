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

/** How wide `tsbgp status` draws its tables: the INFO column is cut to fit (`tsbgp status PEER` shows it whole). */
const STATUS_WIDTH = 120;

/** `text` cut to `width` characters, the last one an ellipsis when cut. */
function fit(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** The `calicoctl node status` layout: one table per family, or "No IPvN peers found." */
export function renderStatus(rows: readonly StatusRow[], now: Date, processLine = 'tsbgp agent is running.', width = STATUS_WIDTH): string {
  const out: string[] = [processLine, ''];
  let cut = false;
  for (const family of [4, 6] as const) {
    out.push(`IPv${family} BGP status`);
    const mine = rows.filter((r) => r.family === family);
    if (mine.length === 0) {
      out.push(`No IPv${family} peers found.`, '');
      continue;
    }
    const header = ['PEER ADDRESS', 'PEER TYPE', 'STATE', 'SINCE', 'INFO'];
    const cells = mine.map((r) => [r.address, r.peerType, stateWord(r.bgpState), sinceText(r.since, now), r.detail ? `${r.bgpState} ${r.detail}` : r.bgpState]);
    // Each column takes its width plus 3 (a space each side and a bar), and one bar closes the row.
    const fixed = [0, 1, 2, 3].reduce((sum, i) => sum + Math.max(header[i].length, ...cells.map((c) => c[i].length)) + 3, 0);
    const infoWidth = Math.max(header[4].length, width - fixed - 4);
    for (const c of cells) {
      if (c[4].length > infoWidth) cut = true;
      c[4] = fit(c[4], infoWidth);
    }
    out.push(table(header, cells), '');
  }
  if (cut) out.push('INFO is cut to fit; `tsbgp status PEER` shows it whole.', '');
  return out.join('\n');
}
