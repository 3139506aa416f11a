/**
 * Adj-RIB-In of one peer: each route as received (pre-policy) and as
 * accepted (post-policy, or null when refused), so import can be re-run
 * without asking the peer (soft reconfiguration inbound). An accepted
 * route is itself the Loc-RIB candidate (one object per route, no Prefix kept).
 */
import type { AttrSet } from './attr-store.js';
import type { Path, PeerSource } from './path.js';
import { familyOfKey, type PrefixKey } from './prefix-key.js';

export class InRoute implements Path {
  constructor(
    readonly source: PeerSource,
    /** keyOf(prefix). */
    readonly key: PrefixKey,
    /** ADD-PATH identifier (0 without ADD-PATH). */
    readonly pathId: number,
    /** The session uses ADD-PATH for this route's family. */
    readonly addPath: boolean,
    readonly pre: AttrSet,
    /** Post-policy attributes; null when ineligible or rejected by import policy. */
    readonly post: AttrSet | null,
    /** Graceful restart: kept from before the restart, not yet re-announced. */
    public stale: boolean,
  ) {}

  /** As a Loc-RIB candidate (only ever placed there when `post` is set). */
  get attrs(): AttrSet {
    return this.post!;
  }
}

export type InKey = number | string;

export function inKey(key: PrefixKey, pathId: number | undefined): InKey {
  return pathId === undefined ? key : `${key}#${pathId}`;
}

export class AdjRibIn {
  readonly routes = new Map<InKey, InRoute>();

  get size(): number {
    return this.routes.size;
  }

  get(key: InKey): InRoute | undefined {
    return this.routes.get(key);
  }

  set(key: InKey, r: InRoute): void {
    this.routes.set(key, r);
  }

  delete(key: InKey): void {
    this.routes.delete(key);
  }

  /** Routes of one family (4 or 6). */
  *ofFamily(family: 4 | 6): IterableIterator<[InKey, InRoute]> {
    for (const e of this.routes) if (familyOfKey(e[1].key) === family) yield e;
  }
}
