import type { Resource, ResourceKind } from './resources.js';
import { isNamespaced, keyOf, resourceKey } from './resources.js';
import type { ResourceEvent } from './state.js';
import { validateObject, type ManifestIssue } from './validate.js';

/**
 * What the API source last knew of one resource type, and the pure rules that
 * turn raw API objects into ClusterEvents: validate every object, emit only
 * real changes, keep the last valid version when an update is invalid, and on
 * a relist diff the whole set so unchanged objects produce no events.
 */
export interface KnownStep {
  readonly events: ResourceEvent[];
  /** Issues that are new or changed since they were last reported. */
  readonly issues: ManifestIssue[];
}

interface Entry {
  readonly resource: Resource;
  /** The resource as JSON, to tell a real change from a re-sent version; computed at the first comparison. */
  readonly json?: string;
  /** metadata.uid, for Events (not part of the resource: a new uid alone is no change to plan). */
  readonly uid?: string;
}

/** `namespace/name` as the API server scopes it ("" namespace for cluster-scoped). */
function rawIdentity(raw: unknown): { name?: string; namespace?: string; uid?: string } {
  const meta = (raw as { metadata?: { name?: unknown; namespace?: unknown; uid?: unknown } } | null)?.metadata;
  return {
    name: typeof meta?.name === 'string' ? meta.name : undefined,
    namespace: typeof meta?.namespace === 'string' && meta.namespace !== '' ? meta.namespace : undefined,
    uid: typeof meta?.uid === 'string' && meta.uid !== '' ? meta.uid : undefined,
  };
}

export class KnownObjects {
  private readonly entries = new Map<string, Entry>();
  /** Current issue per key (or per raw identity when no key could be read), as reported. */
  private readonly issueText = new Map<string, string>();
  private readonly issueByKey = new Map<string, readonly ManifestIssue[]>();
  /** Warnings and ignored fields of valid objects (unknown fields, Calico-only features), per key. */
  private readonly notesByKey = new Map<string, readonly ManifestIssue[]>();
  /** Keys seen so far by the list arriving page by page (beginList .. endList). */
  private listed?: Set<string>;

  constructor(
    readonly kind: ResourceKind,
    /** The apiVersion stamped on list items, which the API server sends without kind/apiVersion. */
    readonly apiVersion: string,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  resources(): Resource[] {
    return [...this.entries.values()].map((e) => e.resource);
  }

  /** The metadata.uid of the known object `name` (in `namespace` for namespaced kinds). */
  uidOf(name: string, namespace?: string): string | undefined {
    return this.entries.get(resourceKey(this.kind, name, isNamespaced(this.kind) ? (namespace ?? 'default') : undefined))?.uid;
  }

  /** Issues of objects whose newest version is invalid, and the notes of valid ones. */
  issues(): ManifestIssue[] {
    return [...[...this.issueByKey.values()].flat(), ...[...this.notesByKey.values()].flat()];
  }

  private keyFor(raw: unknown): string {
    const { name, namespace } = rawIdentity(raw);
    return resourceKey(this.kind, name ?? '', isNamespaced(this.kind) ? (namespace ?? 'default') : undefined);
  }

  private typed(raw: unknown): unknown {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
    const o = raw as Record<string, unknown>;
    return { ...o, apiVersion: o.apiVersion ?? this.apiVersion, kind: o.kind ?? this.kind };
  }

  /** An ADDED/MODIFIED object (from a watch or a list). */
  upsert(raw: unknown): KnownStep {
    const key = this.keyFor(raw);
    const v = validateObject(this.typed(raw));
    if (!v.ok) {
      // An invalid version never replaces the last valid one: report and keep.
      return { events: [], issues: this.noteIssue(key, v.issues) };
    }
    const cleared = this.clearIssue(key);
    if (v.notes.length > 0) this.notesByKey.set(key, v.notes);
    else this.notesByKey.delete(key);
    const uid = rawIdentity(raw).uid;
    const old = this.entries.get(key);
    if (!old) {
      // a new object: nothing to compare with yet (a burst of adds skips the stringify)
      this.entries.set(key, { resource: v.resource, uid });
      return { events: [{ type: 'add', resource: v.resource }], issues: cleared };
    }
    const json = JSON.stringify(v.resource);
    if ((old.json ?? JSON.stringify(old.resource)) === json) {
      if (old.uid !== uid || old.json === undefined) this.entries.set(key, { ...old, json, uid });
      return { events: [], issues: cleared };
    }
    this.entries.set(key, { resource: v.resource, json, uid });
    return { events: [{ type: 'update', resource: v.resource }], issues: cleared };
  }

  /** A DELETED object: only the identity matters. */
  remove(raw: unknown): KnownStep {
    const key = this.keyFor(raw);
    this.clearIssue(key);
    this.notesByKey.delete(key);
    const old = this.entries.get(key);
    if (!old) return { events: [], issues: [] };
    this.entries.delete(key);
    return { events: [deleteEvent(old.resource)], issues: [] };
  }

  /**
   * A complete list: objects missing from it are deleted, the others upserted.
   * An object present but invalid keeps its last valid version (it still exists).
   */
  replaceAll(items: readonly unknown[]): KnownStep {
    this.beginList();
    const a = this.listPage(items);
    const b = this.endList();
    for (const e of b.events) a.events.push(e);
    return a;
  }

  /** A list arriving page by page starts (again): `listPage` for each page, then `endList`. */
  beginList(): void {
    this.listed = new Set();
  }

  /** One page of a list: its objects are upserted (and remembered as present). */
  listPage(items: readonly unknown[]): { events: ResourceEvent[]; issues: ManifestIssue[] } {
    const present = (this.listed ??= new Set());
    const events: ResourceEvent[] = [];
    const issues: ManifestIssue[] = [];
    for (const raw of items) {
      present.add(this.keyFor(raw));
      const s = this.upsert(raw);
      for (const e of s.events) events.push(e);
      for (const i of s.issues) issues.push(i);
    }
    return { events, issues };
  }

  /** The list is complete: what none of its pages held is deleted. */
  endList(): KnownStep {
    const present = this.listed ?? new Set<string>();
    this.listed = undefined;
    const events: ResourceEvent[] = [];
    for (const [key, e] of [...this.entries]) {
      if (present.has(key)) continue;
      this.entries.delete(key);
      this.notesByKey.delete(key);
      events.push(deleteEvent(e.resource));
    }
    for (const key of [...this.issueByKey.keys()]) if (!present.has(key)) this.clearIssue(key);
    return { events, issues: [] };
  }

  private noteIssue(key: string, issues: readonly ManifestIssue[]): ManifestIssue[] {
    const text = JSON.stringify(issues);
    this.issueByKey.set(key, issues);
    if (this.issueText.get(key) === text) return [];
    this.issueText.set(key, text);
    return [...issues];
  }

  private clearIssue(key: string): ManifestIssue[] {
    this.issueByKey.delete(key);
    this.issueText.delete(key);
    return [];
  }
}

function deleteEvent(r: Resource): ResourceEvent {
  return { type: 'delete', kind: r.kind, name: r.name, namespace: 'namespace' in r ? r.namespace : undefined };
}

export { keyOf };

export interface BackoffOptions {
  /** First retry delay. */
  readonly initialMs: number;
  /** Upper bound on the delay. */
  readonly maxMs: number;
  /** 0..1: the share of the delay that is randomised (spreads out a fleet of agents). */
  readonly jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000, jitter: 0.5 };

/** Delay before retry number `attempt` (0-based): exponential, capped, jittered downwards. */
export function backoffDelay(attempt: number, opts: BackoffOptions, random: number): number {
  const base = Math.min(opts.maxMs, opts.initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(base * (1 - opts.jitter * random));
}
