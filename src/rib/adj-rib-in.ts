/**
 * Adj-RIB-In of one peer: each route as received (pre-policy) and as
 * accepted (post-policy, or null when refused), so import can be re-run
 * without asking the peer (soft reconfiguration inbound).
 */
import type { Prefix } from '../net/prefix.js';
import type { AttrSet } from './attr-store.js';
import type { Path } from './path.js';
import { keyOf } from './prefix-key.js';

export interface InRoute {
  readonly prefix: Prefix;
  /** ADD-PATH identifier, or undefined when the session does not use ADD-PATH for this family. */
  readonly pathId: number | undefined;
  readonly pre: AttrSet;
  /** The Loc-RIB candidate; null when ineligible or rejected by import policy. */
  readonly path: Path | null;
  /** Graceful restart: kept from before the restart, not yet re-announced. */
  stale: boolean;
}

export type InKey = number | string;

export function inKey(prefix: Prefix, pathId: number | undefined): InKey {
  const k = keyOf(prefix);
  return pathId === undefined ? k : `${k}#${pathId}`;
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
    for (const e of this.routes) if (e[1].prefix.family === family) yield e;
  }
}
