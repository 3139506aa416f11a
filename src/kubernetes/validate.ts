/**
 * Parsed YAML/JSON object → typed resource, or issues naming file, kind,
 * namespace/name and field path. Split by concern: field readers and the
 * error collector (validate-fields.ts), the Kubernetes kinds
 * (validate-core.ts), the Calico kinds driven by schema.ts
 * (validate-calico.ts); here the envelope (kind, apiVersion, metadata) and
 * the set of many objects.
 */
import type { Resource, ResourceKind } from './resources.js';
import { describe, isNamespaced, resourceKey } from './resources.js';
import { KINDS, unknownFields } from './schema.js';
import { validateBGPConfiguration, validateBGPFilter, validateBGPPeer, validateBlockAffinity, validateIPPool } from './validate-calico.js';
import { validateEndpointSlice, validateNode, validateSecret, validateService, type Meta } from './validate-core.js';
import { asObj, Collector, FieldError, labelMap, NO_LABELS, typeName, type Obj } from './validate-fields.js';

export { parseCommunityLiteral } from './validate-fields.js';

/**
 * One problem found in user input, with where it is. An `error` skips the
 * resource; a `warning` (an unknown field, a Calico feature tsbgp lacks) keeps
 * it but must be seen; `ignored` is informational (kinds and Calico fields
 * that are not tsbgp's business).
 */
export interface ManifestIssue {
  readonly severity: 'error' | 'warning' | 'ignored';
  readonly file?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** Dotted field path inside the resource, e.g. `spec.exportV4[0].matchOperator`. */
  readonly path?: string;
  readonly message: string;
}

/** `file: Kind ns/name: path: message`, skipping what is unknown. */
export function formatIssue(i: ManifestIssue): string {
  const parts: string[] = [];
  if (i.file) parts.push(i.file);
  if (i.kind) parts.push(describe(i.kind, i.name, i.namespace));
  if (i.path) parts.push(i.path);
  parts.push(i.message);
  return parts.join(': ');
}

const CALICO_API = ['projectcalico.org/v3', 'crd.projectcalico.org/v1'];
/** The core kinds' API versions, then every Calico kind of schema.ts. */
const API_VERSIONS: Record<string, readonly string[]> = {
  Node: ['v1'],
  Service: ['v1'],
  EndpointSlice: ['discovery.k8s.io/v1'],
  Secret: ['v1'],
  ...Object.fromEntries(KINDS.map((k) => [k.kind, CALICO_API])),
};

export function isKnownKind(kind: unknown): kind is ResourceKind {
  return typeof kind === 'string' && Object.hasOwn(API_VERSIONS, kind);
}

const VALIDATORS: { [K in ResourceKind]: (o: Obj, m: Meta, c: Collector) => Extract<Resource, { kind: K }> } = {
  Node: validateNode,
  Service: validateService,
  EndpointSlice: validateEndpointSlice,
  BGPConfiguration: validateBGPConfiguration,
  BGPPeer: validateBGPPeer,
  IPPool: validateIPPool,
  BGPFilter: validateBGPFilter,
  BlockAffinity: validateBlockAffinity,
  Secret: validateSecret,
};

export type ValidationResult =
  /** `notes`: warnings and ignored fields of a resource that is still used. */
  | { readonly ok: true; readonly resource: Resource; readonly notes: readonly ManifestIssue[] }
  /** `issue`: the first error; `issues`: every error found, the first included. */
  | { readonly ok: false; readonly issue: ManifestIssue; readonly issues: readonly ManifestIssue[]; readonly key?: string };

/**
 * Validates one parsed object. On failure the issue names the file, kind,
 * namespace/name (when readable) and field path; `key` is the resource's
 * identity when it could be read, so a caller can keep the last valid version.
 */
export function validateObject(raw: unknown, file?: string): ValidationResult {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return only({ severity: 'error', file, message: `expected a resource (a map with apiVersion and kind), got ${typeName(raw)}` });
  }
  const o = raw as Obj;
  const kind = o.kind;
  if (typeof kind !== 'string' || kind === '') return only({ severity: 'error', file, path: 'kind', message: 'is required' });
  let meta: Obj;
  try {
    meta = asObj(o.metadata, 'metadata');
  } catch (e) {
    return only({ severity: 'error', file, kind, path: 'metadata', message: (e as Error).message });
  }
  const name = typeof meta.name === 'string' && meta.name !== '' ? meta.name : undefined;
  const nsRaw = typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : undefined;
  if (!isKnownKind(kind)) return only({ severity: 'ignored', file, kind, name, namespace: nsRaw, message: `kind ${kind} is not used by tsbgp; ignored` });
  const namespace = isNamespaced(kind) ? (nsRaw ?? 'default') : undefined;
  const issueAt = (path: string | undefined, message: string): ManifestIssue => ({ severity: 'error', file, kind, namespace, name, path, message });
  const fail = (path: string | undefined, message: string, withKey = true): ValidationResult => ({
    ...only(issueAt(path, message)),
    key: withKey && name ? resourceKey(kind, name, namespace) : undefined,
  });
  if (name === undefined) return fail('metadata.name', 'is required', false);
  const api = o.apiVersion;
  if (!API_VERSIONS[kind].includes(api as string)) {
    return fail('apiVersion', `expected ${API_VERSIONS[kind].map((v) => JSON.stringify(v)).join(' or ')} for ${kind}, got ${typeName(api)}`);
  }
  const collector = new Collector();
  const errors = collector.errors;
  let resource: Resource | undefined;
  try {
    const m: Meta = {
      name,
      namespace,
      labels: collector.soft(() => labelMap(meta.labels, 'metadata.labels'), NO_LABELS),
      annotations: collector.soft(() => labelMap(meta.annotations, 'metadata.annotations'), NO_LABELS),
    };
    resource = VALIDATORS[kind](o, m, collector);
  } catch (e) {
    if (!(e instanceof FieldError)) throw e;
    errors.push(e);
  }
  if (errors.length === 0 && resource) {
    const notes = [
      ...collector.warnings.map((w): ManifestIssue => ({ severity: 'warning', file, kind, namespace, name, path: w.path, message: w.message })),
      ...unknownFields(kind, o.spec).map((u): ManifestIssue => ({ severity: u.severity, file, kind, namespace, name, path: u.path, message: u.message })),
    ];
    return { ok: true, resource, notes };
  }
  // A typo elsewhere in the spec is often the cause ("matchOperater" leaves matchOperator unset).
  const typos = unknownFields(kind, o.spec).filter((u) => u.severity === 'warning');
  const issues = errors.map((e, i) =>
    issueAt(e.path, i === 0 && typos.length ? `${e.message} (also: ${typos.map((u) => `${u.path}: ${u.message}`).join('; ')})` : e.message),
  );
  return { ok: false, issue: issues[0], issues, key: resourceKey(kind, name, namespace) };
}

/** A failure with one issue. */
function only(issue: ManifestIssue): { ok: false; issue: ManifestIssue; issues: readonly ManifestIssue[] } {
  return { ok: false, issue, issues: [issue] };
}

export interface SourcedObject {
  readonly object: unknown;
  readonly file?: string;
}

export interface ValidatedSet {
  readonly resources: Resource[];
  /** Which file each valid resource came from, by resource key. */
  readonly files: Map<string, string | undefined>;
  readonly issues: ManifestIssue[];
  /** Keys of resources whose latest definition is invalid (so a caller may keep an older valid one). */
  readonly invalidKeys: Set<string>;
}

/**
 * Validates many objects: invalid ones are reported and skipped, a second
 * definition of the same kind/namespace/name is an error (the first wins),
 * and each unknown kind is reported once as ignored, as is each Calico field
 * tsbgp does not use (once per kind and field, not per resource).
 */
export function validateAll(objects: Iterable<SourcedObject>): ValidatedSet {
  const resources: Resource[] = [];
  const files = new Map<string, string | undefined>();
  const issues: ManifestIssue[] = [];
  const invalidKeys = new Set<string>();
  const ignoredKinds = new Set<string>();
  for (const { object, file } of objects) {
    const r = validateObject(object, file);
    if (!r.ok) {
      if (r.issue.severity === 'ignored') {
        if (ignoredKinds.has(r.issue.kind ?? '')) continue;
        ignoredKinds.add(r.issue.kind ?? '');
      }
      issues.push(...r.issues);
      if (r.key) invalidKeys.add(r.key);
      continue;
    }
    for (const note of r.notes) {
      if (note.severity === 'ignored') {
        const field = `${note.kind} ${note.path?.replace(/\[\d+\]/g, '[]')}`;
        if (ignoredKinds.has(field)) continue;
        ignoredKinds.add(field);
      }
      issues.push(note);
    }
    const res = r.resource;
    const ns = 'namespace' in res ? res.namespace : undefined;
    const key = resourceKey(res.kind, res.name, ns);
    if (files.has(key)) {
      const first = files.get(key);
      issues.push({
        severity: 'error',
        file,
        kind: res.kind,
        namespace: ns,
        name: res.name,
        path: 'metadata.name',
        message:
          `duplicate name: already defined${first ? ` in ${first}` : ''}; this definition is skipped` +
          (first && first !== file
            ? ' (the files of one layer must not redefine a resource; to apply files in order, give each its own --manifests layer)'
            : ''),
      });
      continue;
    }
    files.set(key, file);
    resources.push(res);
  }
  return { resources, files, issues, invalidKeys };
}
