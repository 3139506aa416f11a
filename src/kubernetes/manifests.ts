/**
 * Manifest text → objects, and the merge and diff of loads (pure). Reading
 * files and watching them is shell: src/agent/sources/manifest-files.ts.
 */
import { CORE_SCHEMA, load, YAMLException } from 'js-yaml';
import type { Resource } from './resources.js';
import { keyOf } from './resources.js';
import type { ResourceEvent } from './state.js';
import { validateAll, type ManifestIssue, type SourcedObject } from './validate.js';

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

/** What a file with no documents at all says (0 bytes, blank, or only comments). */
const EMPTY_FILE_MESSAGE =
  'no documents (empty, or only comments): a truncated or half-written file is not a deletion, so its last valid resources stay in force; ' +
  'to remove them, write an empty list (apiVersion: v1, kind: List, items: []) or, in a folder, delete the file';

/**
 * Validates the texts of one load (read by the shell) into a `LoadResult`.
 * `issues` are the reading errors so far. A file is broken, and every
 * resource it defined before stays in force, when it does not parse, has no
 * document at all, or holds a document that is not a Kubernetes object (a
 * plain string, a list, a map without apiVersion and kind): each is an error
 * naming the file, never an empty set.
 */
export function loadTexts(texts: Iterable<{ file: string; text: string }>, issues: ManifestIssue[] = []): LoadResult {
  const brokenFiles = new Set<string>();
  const parseIssues: ManifestIssue[] = [];
  // One file at a time: its text and parsed objects are garbage once its
  // resources are validated, so a load of 100,000 Services never holds every
  // file's text and raw objects at once (docs/agent-memory.md). `texts` may
  // be a generator reading the files as it goes; the issues it reports
  // (unreadable files) come first, as when they were read beforehand.
  function* objects(): Generator<SourcedObject> {
    for (const { file, text } of texts) {
      const parsed = parseManifestText(text, file);
      if (parsed.issues.length > 0) brokenFiles.add(file);
      else if (parsed.objects.length === 0 && parsed.documents === 0) {
        parseIssues.push({ severity: 'error', file, message: EMPTY_FILE_MESSAGE });
        brokenFiles.add(file);
      }
      parseIssues.push(...parsed.issues);
      yield* parsed.objects;
    }
  }
  const v = validateAll(objects());
  const all = [...issues, ...parseIssues, ...v.issues];
  // An error about a file that names no kind is about the file itself (unreadable, not YAML, not an object).
  for (const i of all) if (i.file && i.severity === 'error' && !i.kind) brokenFiles.add(i.file);
  return { resources: v.resources, files: v.files, issues: all, invalidKeys: v.invalidKeys, brokenFiles };
}

/** Splits multi-document YAML text into objects; `kind: List` items are flattened. */
export function parseManifestText(text: string, file?: string): { objects: SourcedObject[]; issues: ManifestIssue[]; documents: number } {
  const objects: SourcedObject[] = [];
  const issues: ManifestIssue[] = [];
  let documents = 0;
  const add = (value: unknown) => {
    if (value === null || value === undefined) return; // empty document (e.g. trailing `---`)
    documents++;
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
  // JSON is YAML, but a YAML parser takes longer over it (the `yaml`
  // package 100 times, 4 s for 10,000 Services): a text that is one JSON
  // object is read as JSON. Anything else, broken JSON included, goes to the YAML parser,
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
      return { objects, issues, documents };
    }
  }
  // js-yaml (YAML 1.2 core schema: no timestamps, no merge keys) is ~1/8 of
  // the `yaml` package's memory and ~20 times faster (docs/agent-memory.md).
  // Its loadAll stops at the first error, so the text is cut into documents
  // here: a broken one is reported and the others still count.
  const docs = splitDocuments(text);
  docs.forEach((doc, i) => {
    let value: unknown;
    try {
      value = load(doc.text, { schema: CORE_SCHEMA, filename: file });
    } catch (e) {
      if (!(e instanceof YAMLException)) throw e;
      issues.push({
        severity: 'error',
        file,
        message: `YAML document ${i + 1}: ${e.reason}${e.mark ? ` at ${position(doc, e.mark, i === docs.length - 1)}` : ''}`,
      });
      return;
    }
    // Aliases share one object: a small text can stand for a huge tree ("billion laughs").
    if (expandsBeyond(value, MAX_EXPANSION_PER_CHAR * doc.text.length + 10_000)) {
      issues.push({
        severity: 'error',
        file,
        message: `YAML document ${i + 1}: its aliases expand to more than ${MAX_EXPANSION_PER_CHAR} values per character of text; refusing it`,
      });
      return;
    }
    add(value);
  });
  return { objects, issues, documents };
}

/** How far aliases may expand a document: values per character of its text (without aliases there is at most one). */
const MAX_EXPANSION_PER_CHAR = 10;

/**
 * Cuts YAML text into its documents at `---` (and after `...`) lines, each
 * with the line it starts on (1-based). Comments and directives before a
 * `---` stay with the document they precede. Per the YAML spec a marker at
 * the start of a line always ends a document (it cannot occur inside a
 * scalar), so the cut matches what a streaming parser does.
 */
export function splitDocuments(text: string): { text: string; line: number }[] {
  const lines = text.split('\n');
  const docs: { text: string; line: number }[] = [];
  let start = 0;
  /** The current piece holds only blank, comment and directive lines, and no marker. */
  let prelude = true;
  const cut = (end: number) => {
    docs.push({ text: lines.slice(start, end).join('\n'), line: start + 1 });
    start = end;
  };
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (/^---(?:[ \t]|$)/.test(l)) {
      if (!prelude) cut(i);
      prelude = false;
    } else if (/^\.\.\.(?:[ \t]|$)/.test(l)) {
      cut(i + 1);
      prelude = true;
    } else if (prelude && !/^\s*(?:#.*)?$/.test(l) && !l.startsWith('%')) prelude = false;
  }
  if (start < lines.length) cut(lines.length);
  return docs;
}

/**
 * Where in the whole text a js-yaml error mark (0-based, in one document)
 * is. At the end of a document that the next one's `---` cut off, that
 * marker's line (where a streaming parser stops too); at the end of the
 * text, the end of its last line.
 */
function position(doc: { text: string; line: number }, mark: { line: number; column: number }, last: boolean): string {
  const lines = doc.text.split('\n');
  if (mark.line >= lines.length && !last) return `line ${doc.line + lines.length}, column 1`;
  if (mark.line >= lines.length) return `line ${doc.line + lines.length - 1}, column ${lines[lines.length - 1].length + 1}`;
  return `line ${doc.line + mark.line}, column ${mark.column + 1}`;
}

/** Whether walking `value`, an alias counted each time it is reached, visits more than `limit` values. */
function expandsBeyond(value: unknown, limit: number): boolean {
  const stack: unknown[] = [value];
  let n = 0;
  while (stack.length > 0) {
    const v = stack.pop();
    if (++n > limit) return true;
    if (v !== null && typeof v === 'object') for (const c of Array.isArray(v) ? v : Object.values(v)) stack.push(c);
  }
  return false;
}

/**
 * Merges a new load with the running set: a resource whose new definition is
 * invalid, or whose file no longer parses, keeps its last valid version. An
 * invalid edit never replaces a valid running configuration.
 */
export function mergeWithPrevious(
  previous: ReadonlyMap<string, { resource: Resource; file?: string }>,
  next: LoadResult,
): Map<string, { resource: Resource; file?: string }> {
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
export function eventsBetween(before: ReadonlyMap<string, { resource: Resource }>, after: ReadonlyMap<string, { resource: Resource }>): ResourceEvent[] {
  const events: ResourceEvent[] = [];
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
