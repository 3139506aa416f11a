/**
 * Secrets: the only kind whose values must never be shown. tsbgp reads the
 * Secrets that BGPPeer `password.secretKeyRef` and BGPConfiguration
 * `nodeMeshPassword.secretKeyRef` name, in its own namespace (env NAMESPACE,
 * default kube-system, as Calico's confd does). Pure: validation, the
 * redacting value, and resolving a reference against the state.
 */
import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import type { SecretKeyRef } from './resources.js';

/**
 * One Secret value. It prints, logs and serialises as a short digest
 * (`sha256:…`), never as itself, so plans, status and snapshots can carry it
 * and still show when it changed; `reveal()` is for the socket that needs it.
 */
export class SecretValue {
  readonly #value: string;
  readonly digest: string;

  constructor(value: string) {
    this.#value = value;
    this.digest = `sha256:${createHash('sha256').update(value).digest('hex').slice(0, 12)}`;
  }

  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return this.digest;
  }

  toString(): string {
    return this.digest;
  }

  [inspect.custom](): string {
    return `SecretValue(${this.digest})`;
  }
}

/** The namespace tsbgp reads Secrets from (as confd: env NAMESPACE, default kube-system). */
export function secretNamespace(env: NodeJS.ProcessEnv = process.env): string {
  return env.NAMESPACE && env.NAMESPACE !== '' ? env.NAMESPACE : 'kube-system';
}

export type Resolved = { readonly ok: true; readonly value: SecretValue } | { readonly ok: false; readonly message: string };

/**
 * A secretKeyRef against the Secrets known in `namespace`. A missing Secret,
 * key or empty value is a reason to refuse the peering (Calico renders no
 * password then, and the session would run unprotected).
 */
export function resolveSecretRef(
  secrets: ReadonlyMap<string, { readonly data: Readonly<Record<string, SecretValue>> }>,
  namespace: string,
  ref: SecretKeyRef,
): Resolved {
  const s = secrets.get(`${namespace}/${ref.name}`);
  const what = `Secret ${namespace}/${ref.name}`;
  if (!s)
    return {
      ok: false,
      message: `${what} not found; the peering is refused until it exists (running without the password would leave the session unprotected)`,
    };
  const v = Object.hasOwn(s.data, ref.key) ? s.data[ref.key] : undefined;
  if (!v)
    return {
      ok: false,
      message: `${what} has no key "${ref.key}"; the peering is refused until it does (running without the password would leave the session unprotected)`,
    };
  const text = v.reveal();
  if (text === '') return { ok: false, message: `${what} key "${ref.key}" is empty; the peering is refused` };
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > 80) return { ok: false, message: `${what} key "${ref.key}" is ${bytes} bytes; TCP-MD5 takes at most 80; the peering is refused` };
  return { ok: true, value: v };
}
