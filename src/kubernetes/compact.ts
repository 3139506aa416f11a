/**
 * Lists that live as long as the cluster state does (cached resources, the
 * planner's per-Service contributions) are kept exact: V8 gives an empty
 * array 17 slots on its first `push`, and 100,000 Services hold several
 * lists each (docs/agent-memory.md). Frozen, so a shared one cannot change.
 */
const NONE: readonly never[] = Object.freeze([]);

/** An exact copy of a list built by `push`, or the one shared empty list. */
export function compact<T>(a: readonly T[]): readonly T[] {
  return a.length === 0 ? (NONE as readonly T[]) : a.slice();
}

/** The one shared empty list. */
export function none<T>(): readonly T[] {
  return NONE as readonly T[];
}
