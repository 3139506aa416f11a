/** "2m 5s", "3h 0m": how long ago, coarse. */
export function ago(since: Date, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - since.getTime()) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}
