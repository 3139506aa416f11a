/**
 * Validation's building blocks: `FieldError` (a mistake at a field path),
 * the `Collector` that notes the mistakes that do not stop a resource, the
 * field readers (each throws a FieldError naming the path), and
 * `specFields`, which reads a Calico kind's spec fields with the type, enum
 * and range that schema.ts gives them, so that those checks are written once.
 */
import { Address, ParseError, Prefix } from '../net/index.js';
import type { CommunityValue, Labels, SecretKeyRef } from './resources.js';
import { parseCommunityLiteral as parseLiteral } from '../wire/index.js';
import { KINDS, type Field } from './schema.js';
import { parseSelector, SelectorError, type Selector } from './selector.js';

/** Thrown inside a resource's validator; caught per resource so the rest still applies. */
export class FieldError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The field errors of the resource being validated, passed to its validator.
 * `soft` reads a field that does not depend on the others: its FieldError is
 * noted and `fallback` used, so one pass reports every independent mistake of
 * a resource instead of the first only. Errors that make the rest
 * meaningless (a spec that is not a map) are still thrown.
 */
export class Collector {
  readonly errors: FieldError[] = [];
  /** Entries left out on purpose (as Calico leaves them out); surfaced as warnings, the resource still applies. */
  readonly warnings: FieldError[] = [];

  /** Notes a warning: the resource is used, this part of it is not. */
  warn(path: string, message: string): void {
    this.warnings.push(new FieldError(path, message));
  }

  soft<T>(fn: () => T, fallback: T): T {
    try {
      return fn();
    } catch (e) {
      if (!(e instanceof FieldError)) throw e;
      this.errors.push(e);
      return fallback;
    }
  }

  /** Notes an error and goes on. */
  report(path: string, message: string): void {
    this.errors.push(new FieldError(path, message));
  }

  /** Each element read by `fn`, those in error noted and left out. */
  each<T, R>(list: readonly T[], fn: (item: T, index: number) => R): R[] {
    const out: R[] = [];
    list.forEach((item, i) => {
      const r = this.soft<{ v: R } | undefined>(() => ({ v: fn(item, i) }), undefined);
      if (r) out.push(r.v);
    });
    return out;
  }
}

export type Obj = Record<string, unknown>;

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'a map' : `${typeof v} ${JSON.stringify(v)}`;
}

export function asObj(v: unknown, path: string): Obj {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new FieldError(path, `expected a map, got ${typeName(v)}`);
  return v as Obj;
}

export function asList(v: unknown, path: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new FieldError(path, `expected a list, got ${typeName(v)}`);
  return v;
}

export function optStr(o: Obj, key: string, path: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new FieldError(`${path}${key}`, `expected a string, got ${typeName(v)}`);
  return v;
}

export function reqStr(o: Obj, key: string, path: string): string {
  const v = optStr(o, key, path);
  if (v === undefined || v === '') throw new FieldError(`${path}${key}`, 'is required');
  return v;
}

export function optBool(o: Obj, key: string, path: string): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new FieldError(`${path}${key}`, `expected true or false, got ${typeName(v)}`);
  return v;
}

export function optInt(o: Obj, key: string, path: string, min: number, max: number): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  return intValue(v, `${path}${key}`, min, max);
}

export function intValue(v: unknown, path: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new FieldError(path, `expected an integer, got ${typeName(v)}`);
  if (v < min || v > max) throw new FieldError(path, `${v} is out of range (${min} to ${max})`);
  return v;
}

export function optEnum<T extends string>(o: Obj, key: string, path: string, values: readonly T[]): T | undefined {
  const v = optStr(o, key, path);
  if (v === undefined) return undefined;
  const i = (values as readonly string[]).indexOf(v);
  if (i < 0) throw new FieldError(`${path}${key}`, `unknown value ${JSON.stringify(v)} (expected one of ${values.join(', ')})`);
  // The list's own string: one copy for every resource, not one per parsed text.
  return values[i];
}

export function prefixValue(v: unknown, path: string): Prefix {
  if (typeof v !== 'string') throw new FieldError(path, `expected a CIDR string, got ${typeName(v)}`);
  try {
    return Prefix.parse(v);
  } catch (e) {
    if (e instanceof ParseError) throw new FieldError(path, e.message);
    throw e;
  }
}

export function addressValue(v: unknown, path: string): Address {
  if (typeof v !== 'string') throw new FieldError(path, `expected an IP address string, got ${typeName(v)}`);
  try {
    return Address.parse(v);
  } catch (e) {
    if (e instanceof ParseError) throw new FieldError(path, e.message);
    throw e;
  }
}

export function selectorValue(o: Obj, key: string, path: string): Selector | undefined {
  const v = optStr(o, key, path);
  if (v === undefined || v.trim() === '') return undefined;
  try {
    return parseSelector(v);
  } catch (e) {
    if (e instanceof SelectorError) throw new FieldError(`${path}${key}`, e.message);
    throw e;
  }
}

export function labelMap(v: unknown, path: string): Labels {
  const o = asObj(v, path);
  const out: Record<string, string> = {};
  let n = 0;
  for (const [k, val] of Object.entries(o)) {
    if (typeof val !== 'string') throw new FieldError(`${path}.${k}`, `expected a string value, got ${typeName(val)}`);
    out[k] = val;
    n++;
  }
  return n === 0 ? NO_LABELS : out;
}

/** The labels (or annotations) of every resource that has none: one frozen object. */
export const NO_LABELS: Labels = Object.freeze({});

/** uint32 AS number; also accepts asdot `x.y` text as Calico does. */
export function asNumberValue(v: unknown, path: string): number {
  if (typeof v === 'string') {
    const m = /^(\d+)(?:\.(\d+))?$/.exec(v.trim());
    if (!m) throw new FieldError(path, `expected an AS number, got ${JSON.stringify(v)}`);
    const n = m[2] === undefined ? Number(m[1]) : Number(m[1]) * 65536 + Number(m[2]);
    if (m[2] !== undefined && (Number(m[1]) > 65535 || Number(m[2]) > 65535))
      throw new FieldError(path, `asdot parts must be 0 to 65535, got ${JSON.stringify(v)}`);
    return intValue(n, path, 1, 0xffffffff);
  }
  return intValue(v, path, 1, 0xffffffff);
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

/** Go duration text (`120s`, `2m30s`, `1h`) to seconds. */
export function durationValue(o: Obj, key: string, path: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  const p = `${path}${key}`;
  if (typeof v !== 'string') throw new FieldError(p, `expected a duration such as "120s", got ${typeName(v)}`);
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  if (v === '0') return 0;
  while (at < v.length) {
    re.lastIndex = at;
    const m = re.exec(v);
    if (!m) throw new FieldError(p, `expected a duration such as "120s" or "2m", got ${JSON.stringify(v)}`);
    total += Number(m[1]) * DURATION_UNITS[m[2]];
    at = re.lastIndex;
  }
  if (v.length === 0) throw new FieldError(p, 'empty duration');
  return total;
}

export function secretRef(v: unknown, path: string): SecretKeyRef | undefined {
  if (v === undefined || v === null) return undefined;
  const o = asObj(v, path);
  const ref = asObj(o.secretKeyRef, `${path}.secretKeyRef`);
  if (o.secretKeyRef === undefined) throw new FieldError(`${path}.secretKeyRef`, 'is required');
  return { name: reqStr(ref, 'name', `${path}.secretKeyRef.`), key: reqStr(ref, 'key', `${path}.secretKeyRef.`) };
}

/**
 * `aa:nn` (16-bit parts) or `aa:nn:mm` (32-bit parts), read by the one community parser
 * (src/wire/communities.ts); undefined when `text` is not a literal at all.
 */
export function parseCommunityLiteral(text: string): CommunityValue | undefined | Error {
  try {
    const c = parseLiteral(text);
    return c && { ...c, text };
  } catch (e) {
    return e as Error;
  }
}

export function communityValue(v: unknown, path: string): CommunityValue {
  if (typeof v !== 'string') throw new FieldError(path, `expected a community "aa:nn" or "aa:nn:mm", got ${typeName(v)}`);
  const c = parseCommunityLiteral(v);
  if (c === undefined) throw new FieldError(path, `expected a community "aa:nn" or "aa:nn:mm", got ${JSON.stringify(v)}`);
  if (c instanceof Error) throw new FieldError(path, c.message);
  return c;
}

// ---------- spec fields as schema.ts types them ----------

/**
 * The fields of one map of a Calico kind's spec (the spec itself, or a
 * nested map such as a BGPFilter rule), read with the type, enum and range
 * schema.ts declares. A field the schema does not declare with that type is
 * a programming error (a plain Error), never a user's.
 */
class SpecFields {
  constructor(
    private readonly where: string,
    private readonly props: Readonly<Record<string, Field>>,
  ) {}

  str(o: Obj, key: string, path: string): string | undefined {
    this.field(key, 'string');
    return optStr(o, key, path);
  }

  bool(o: Obj, key: string, path: string): boolean | undefined {
    this.field(key, 'boolean');
    return optBool(o, key, path);
  }

  /** An integer within the schema's range. */
  int(o: Obj, key: string, path: string): number | undefined {
    const [min, max] = this.range(key);
    return optInt(o, key, path, min, max);
  }

  /** The schema's range of an integer field. */
  range(key: string): [number, number] {
    const f = this.field(key, 'integer');
    return [f.min ?? Number.MIN_SAFE_INTEGER, f.max ?? Number.MAX_SAFE_INTEGER];
  }

  /** One of the schema's values (`T`: the resource type's union of them). */
  enum<T extends string>(o: Obj, key: string, path: string): T | undefined {
    const f = this.field(key, 'string');
    if (!f.enum) throw new Error(`schema.ts: ${this.where}.${key} has no enum`);
    return optEnum(o, key, path, f.enum as readonly T[]);
  }

  private field<K extends Field['t']>(key: string, t: K): Extract<Field, { t: K }> {
    const f = Object.hasOwn(this.props, key) ? this.props[key] : undefined;
    if (!f || f.t !== t) throw new Error(`schema.ts: ${this.where}.${key} is not declared as ${t}`);
    return f as Extract<Field, { t: K }>;
  }
}

/** The spec fields of `kind`, or of the map at `path` below its spec (`[]` steps into a list's items). */
export function specFields(kind: string, ...path: string[]): SpecFields {
  const k = KINDS.find((x) => x.kind === kind);
  if (!k) throw new Error(`schema.ts has no kind ${kind}`);
  let f: Field = k.spec;
  for (const step of path) {
    const next: Field | undefined =
      step === '[]' ? (f.t === 'array' ? f.items : undefined) : f.t === 'object' && Object.hasOwn(f.props, step) ? f.props[step] : undefined;
    if (!next) throw new Error(`schema.ts: ${kind} spec has no ${path.join('.')}`);
    f = next;
  }
  if (f.t !== 'object') throw new Error(`schema.ts: ${kind} spec ${path.join('.')} is not a map`);
  return new SpecFields(`${kind} spec${path.length ? `.${path.join('.')}` : ''}`, f.props);
}
