/**
 * Shell: where the API server is and how to authenticate to it. A kubeconfig's
 * current context or the pod's service account resolves to a `KubeConnection`;
 * files it names (CA, client certificate and key, token) are remembered by path
 * so the HTTP layer (kube-http.ts) can re-read them when they rotate. An `exec`
 * credential plugin is run here for a bearer token.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import yaml from 'js-yaml';

/** An `exec` credential plugin (client.authentication.k8s.io ExecCredential), run for a bearer token. */
export interface ExecPlugin {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly apiVersion: string;
}

/** Where the API server is and how to authenticate to it: what a kubeconfig or the service account resolves to. */
export interface KubeConnection {
  /** The API server's URL, without a trailing slash. */
  readonly server: string;
  /** The context's or service account's namespace, when one is given. */
  readonly namespace?: string;
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly insecureSkipTlsVerify: boolean;
  /** TLS server name to verify instead of the URL's host. */
  readonly tlsServerName?: string;
  readonly token?: string;
  /** Re-read on use (bound service-account tokens rotate). */
  readonly tokenFile?: string;
  readonly basic?: { readonly username: string; readonly password: string };
  readonly exec?: ExecPlugin;
  /** Where `ca`, `cert` and `key` were read from, when from files: re-read as they rotate. */
  readonly tlsFiles?: TlsFiles;
}

/** The files a connection's TLS material was read from, re-read when they may have rotated (kube-http.ts). */
export interface TlsFiles {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
}
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

type Yaml = Record<string, unknown>;

function obj(v: unknown, field: string): Yaml {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new Error(`${field} must be a mapping`);
  return v as Yaml;
}

function str(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new Error(`${field} must be a string`);
  return v;
}

function named(list: unknown, section: string, name: string, inner: string): Yaml {
  if (list !== undefined && list !== null && !Array.isArray(list)) throw new Error(`${section} must be a list`);
  const entry = ((list as unknown[] | undefined) ?? []).find((e) => (e as Yaml | null)?.name === name);
  if (!entry) throw new Error(`${section}: no entry named "${name}"`);
  return obj((entry as Yaml)[inner], `${section}[${name}].${inner}`);
}

function b64(v: unknown, field: string): Buffer | undefined {
  const s = str(v, field);
  if (s === undefined) return undefined;
  if (!/^[A-Za-z0-9+/=\s]*$/.test(s)) throw new Error(`${field} is not base64`);
  return Buffer.from(s, 'base64');
}

/** The path a kubeconfig field names, relative to the kubeconfig's folder. */
function pathField(v: unknown, field: string, base: string): string | undefined {
  const p = str(v, field);
  return p === undefined ? undefined : isAbsolute(p) ? p : join(base, p);
}

/** Reads a file a kubeconfig names (relative to the kubeconfig's folder), naming the field when it cannot. */
function fileField(v: unknown, field: string, base: string): Buffer | undefined {
  const p = str(v, field);
  if (p === undefined) return undefined;
  const path = isAbsolute(p) ? p : join(base, p);
  try {
    return readFileSync(path);
  } catch (e) {
    throw new Error(`${field} ${path}: ${(e as Error).message}`);
  }
}

/**
 * Resolves a kubeconfig's current context. Supported: cluster `server`,
 * `certificate-authority(-data)`, `insecure-skip-tls-verify`,
 * `tls-server-name`; user `client-certificate(-data)` with
 * `client-key(-data)`, `token`, `tokenFile`, `username`/`password`, and an
 * `exec` credential plugin returning a token. `auth-provider` and `proxy-url`
 * are refused, naming the field. Errors name the field (the caller names the file).
 */
export function parseKubeconfig(text: string, file: string, opts: { readonly context?: string } = {}): KubeConnection {
  const base = dirname(file);
  let doc: Yaml;
  try {
    doc = obj(yaml.load(text), 'the kubeconfig');
  } catch (e) {
    throw new Error(`not a kubeconfig: ${(e as Error).message}`);
  }
  const ctxName = opts.context ?? str(doc['current-context'], 'current-context');
  {
    if (!ctxName) throw new Error('no current-context');
    const ctx = named(doc.contexts, 'contexts', ctxName, 'context');
    const clusterName = str(ctx.cluster, `contexts[${ctxName}].context.cluster`);
    if (!clusterName) throw new Error(`contexts[${ctxName}].context.cluster is missing`);
    const cluster = named(doc.clusters, 'clusters', clusterName, 'cluster');
    const cf = (k: string) => `clusters[${clusterName}].cluster.${k}`;
    const server = str(cluster.server, cf('server'));
    if (!server) throw new Error(`${cf('server')} is missing`);
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw new Error(`${cf('server')} "${server}" is not a URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${cf('server')} "${server}" must be http or https`);
    if (cluster['proxy-url'] !== undefined) throw new Error(`${cf('proxy-url')} is not supported`);
    const insecure = cluster['insecure-skip-tls-verify'];
    if (insecure !== undefined && typeof insecure !== 'boolean') throw new Error(`${cf('insecure-skip-tls-verify')} must be true or false`);
    const caData = b64(cluster['certificate-authority-data'], cf('certificate-authority-data'));
    const ca = caData ?? fileField(cluster['certificate-authority'], cf('certificate-authority'), base);
    const caFile = caData ? undefined : pathField(cluster['certificate-authority'], cf('certificate-authority'), base);

    const userName = str(ctx.user, `contexts[${ctxName}].context.user`);
    const user = userName ? named(doc.users, 'users', userName, 'user') : {};
    const uf = (k: string) => `users[${userName}].user.${k}`;
    if (user['auth-provider'] !== undefined) {
      const provider = str(obj(user['auth-provider'], uf('auth-provider')).name, uf('auth-provider.name')) ?? '?';
      throw new Error(`${uf('auth-provider')} (${provider}) is not supported: use an exec credential plugin, a token or a client certificate`);
    }
    const certData = b64(user['client-certificate-data'], uf('client-certificate-data'));
    const cert = certData ?? fileField(user['client-certificate'], uf('client-certificate'), base);
    const certFile = certData ? undefined : pathField(user['client-certificate'], uf('client-certificate'), base);
    const keyData = b64(user['client-key-data'], uf('client-key-data'));
    const key = keyData ?? fileField(user['client-key'], uf('client-key'), base);
    const keyFile = keyData ? undefined : pathField(user['client-key'], uf('client-key'), base);
    if (cert && !key) throw new Error(`${uf('client-certificate')} is given without client-key(-data)`);
    if (key && !cert) throw new Error(`${uf('client-key')} is given without client-certificate(-data)`);
    const tokenFileRaw = str(user.tokenFile, uf('tokenFile'));
    const tokenFile = tokenFileRaw === undefined ? undefined : isAbsolute(tokenFileRaw) ? tokenFileRaw : join(base, tokenFileRaw);
    if (tokenFile) fileField(tokenFile, uf('tokenFile'), base); // readable now: fail at start, not at the first request
    const username = str(user.username, uf('username'));
    const password = str(user.password, uf('password'));
    if ((username === undefined) !== (password === undefined))
      throw new Error(`${uf(username === undefined ? 'password' : 'username')} is given without ${username === undefined ? 'username' : 'password'}`);
    let exec: ExecPlugin | undefined;
    if (user.exec !== undefined) {
      const e = obj(user.exec, uf('exec'));
      const command = str(e.command, uf('exec.command'));
      if (!command) throw new Error(`${uf('exec.command')} is missing`);
      const args = e.args ?? [];
      if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) throw new Error(`${uf('exec.args')} must be a list of strings`);
      const envList = e.env ?? [];
      if (!Array.isArray(envList)) throw new Error(`${uf('exec.env')} must be a list of {name, value}`);
      const env: Record<string, string> = {};
      for (const [i, v] of envList.entries()) {
        const n = str((v as Yaml | null)?.name, `${uf('exec.env')}[${i}].name`);
        if (!n) throw new Error(`${uf('exec.env')}[${i}].name is missing`);
        env[n] = String((v as Yaml).value ?? '');
      }
      exec = {
        command: isAbsolute(command) || !command.includes('/') ? command : join(base, command),
        args: args as string[],
        env,
        apiVersion: str(e.apiVersion, uf('exec.apiVersion')) ?? 'client.authentication.k8s.io/v1',
      };
    }
    return {
      server: server.replace(/\/+$/, ''),
      namespace: str(ctx.namespace, `contexts[${ctxName}].context.namespace`),
      ca,
      cert,
      key,
      insecureSkipTlsVerify: insecure === true,
      tlsServerName: str(cluster['tls-server-name'], cf('tls-server-name')),
      token: str(user.token, uf('token')),
      tokenFile,
      basic: username !== undefined && password !== undefined ? { username, password } : undefined,
      exec,
      tlsFiles: caFile || certFile || keyFile ? { ca: caFile, cert: certFile, key: keyFile } : undefined,
    };
  }
}

/** The pod's service account: KUBERNETES_SERVICE_HOST/PORT, its CA and token (both re-read as they rotate) and namespace. */
export function inClusterConnection(env: NodeJS.ProcessEnv = process.env, root = ''): KubeConnection {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('not running in a cluster (KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT unset) and no --kubeconfig given');
  const dir = join(root, SA_DIR);
  const read = (name: string): Buffer => {
    try {
      return readFileSync(join(dir, name));
    } catch (e) {
      throw new Error(`in-cluster service account: ${(e as Error).message}`);
    }
  };
  read('token');
  let namespace: string | undefined;
  try {
    namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    namespace = undefined;
  }
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    namespace,
    ca: read('ca.crt'),
    insecureSkipTlsVerify: false,
    tokenFile: join(dir, 'token'),
    tlsFiles: { ca: join(dir, 'ca.crt') },
  };
}

/** Runs an exec credential plugin (ExecCredential) and returns its token and expiry. */
export async function runExecPlugin(p: ExecPlugin, timeoutMs = 30_000): Promise<{ token: string; expires?: number }> {
  const what = `exec credential plugin ${p.command}`;
  const info = JSON.stringify({ apiVersion: p.apiVersion, kind: 'ExecCredential', spec: { interactive: false } });
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      p.command,
      [...p.args],
      { env: { ...process.env, ...p.env, KUBERNETES_EXEC_INFO: info }, timeout: timeoutMs, maxBuffer: 1 << 20 },
      (err, out, errOut) => {
        if (err) reject(new Error(`${what}: ${err.message.split('\n')[0]}${errOut ? `: ${String(errOut).trim().slice(0, 200)}` : ''}`));
        else resolve(String(out));
      },
    );
  });
  let cred: { status?: { token?: unknown; expirationTimestamp?: unknown; clientCertificateData?: unknown } };
  try {
    cred = JSON.parse(stdout) as typeof cred;
  } catch (e) {
    throw new Error(`${what}: its output is not an ExecCredential (${(e as Error).message})`);
  }
  const token = cred.status?.token;
  if (typeof token !== 'string' || token === '') {
    throw new Error(
      cred.status?.clientCertificateData !== undefined
        ? `${what}: returns a client certificate, which is not supported (only status.token)`
        : `${what}: its ExecCredential has no status.token`,
    );
  }
  const exp = typeof cred.status?.expirationTimestamp === 'string' ? Date.parse(cred.status.expirationTimestamp) : NaN;
  return { token, expires: Number.isFinite(exp) ? exp : undefined };
}
