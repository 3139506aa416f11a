/** How much a monotonic counter grew since `last`; a smaller value means it restarted from 0 (session reset). */
export function counterDelta(last: number | undefined, current: number): number {
  if (last === undefined) return current;
  return current >= last ? current - last : current;
}
