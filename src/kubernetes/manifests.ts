/**
 * Manifest text → objects, and the merge and diff of loads (pure). Reading
 * files and watching them is shell: src/agent/sources/manifest-files.ts.
 */
import { parseAllDocuments } from 'yaml';
import type { Resource } from './resources.js';
import { keyOf } from './resources.js';
import type { ClusterEvent } from './state.js';
import type { ManifestIssue, SourcedObject } from './validate.js';

export interface LoadResult {
  readonly resources: Resource[];
  /** Source file per resource key. */
  readonly files: Map<string, string | undefined>;
  readonly issues: ManifestIssue[];
  /** Keys whose newest definition was invalid. */
  readonly invalidKeys: Set<string>;
  /** Files that could not be read or parsed as YAML at all. */
  readonly brokenFiles: Set<string>;
}

/** Splits multi-document YAML text into objects; `kind: List` items are flattened. */
export function parseManifestText(text: string, file?: string): { objects: SourcedObject[]; issues: ManifestIssue[] } {
  const objects: SourcedObject[] = [];
  const issues: ManifestIssue[] = [];
  const add = (value: unknown) => {
    if (value === null || value === undefined) return; // empty document (e.g. trailing `---`)
    if (typeof value === 'object' && !Array.isArray(value) && (value as { kind?: unknown }).kind === 'List') {
      const items = (value as { items?: unknown }).items;
      if (items !== undefined && !Array.isArray(items)) {
        issues.push({ severity: 'error', file, kind: 'List', path: 'items', message: 'expected a list of resources' });
        return;
      }
      for (const item of items ?? []) objects.push({ object: item, file });
      return;
    }
    objects.push({ object: value, file });
  };
  // JSON is YAML, but the YAML parser takes about 100 times longer over it
  // (4 s for 10,000 Services): a text that is one JSON object is read as
  // JSON. Anything else, broken JSON included, goes to the YAML parser,
  // which reports errors with a position. One difference: JSON.parse keeps
  // the last of duplicate keys where YAML refuses them.
  if (text.trimStart().startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (value !== undefined) {
      add(value);
      return { objects, issues };
    }
  }
  const docs = parseAllDocuments(text, { prettyErrors: true });
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, i) => {
    if (doc.errors.length > 0) {
      const e = doc.errors[0];
      issues.push({ severity: 'error', file, message: `YAML document ${i + 1}: ${e.message.split('\n')[0].replace(/:$/, '')}` });
      return;
    }
    add(doc.toJS({ maxAliasCount: 100 }));
  });
  return { objects, issues };
}

/**
 * Merges a new load with the running set: a resource whose new definition is
 * invalid, or whose file no longer parses, keeps its last valid version. An
 * invalid edit never replaces a valid running configuration.
 */
export function mergeWithPrevious(previous: ReadonlyMap<string, { resource: Resource; file?: string }>, next: LoadResult): Map<string, { resource: Resource; file?: string }> {
  const out = new Map<string, { resource: Resource; file?: string }>();
  for (const r of next.resources) out.set(keyOf(r), { resource: r, file: next.files.get(keyOf(r)) });
  for (const [key, old] of previous) {
    if (out.has(key)) continue;
    if (next.invalidKeys.has(key) || (old.file !== undefined && next.brokenFiles.has(old.file))) out.set(key, old);
  }
  // Key order, so events come out the same whatever the file order was.
  return new Map([...out.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
}

/** The add/update/delete events that turn `before` into `after` (update only when the value changed). */
export function eventsBetween(before: ReadonlyMap<string, { resource: Resource }>, after: ReadonlyMap<string, { resource: Resource }>): ClusterEvent[] {
  const events: ClusterEvent[] = [];
  for (const [key, { resource }] of after) {
    const old = before.get(key);
    if (!old) events.push({ type: 'add', resource });
    // The same object is unchanged: only a reloaded file's resources need a deep compare.
    else if (old.resource !== resource && JSON.stringify(old.resource) !== JSON.stringify(resource)) events.push({ type: 'update', resource });
  }
  for (const [key, { resource: r }] of before) {
    if (!after.has(key)) events.push({ type: 'delete', kind: r.kind, name: r.name, namespace: 'namespace' in r ? r.namespace : undefined });
  }
  return events;
}
