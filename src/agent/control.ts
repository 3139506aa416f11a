/**
 * The control socket: newline-delimited JSON over a Unix socket.
 *   request  {"id": 1, "method": "status", "params": {...}}
 *   response {"id": 1, "result": ...}  or  {"id": 1, "error": {"code": "...", "message": "..."}}
 * A bad request gets an error reply and the connection (and the agent) carry on.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { chmod, lstat, mkdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';

const METHODS = ['status', 'routes', 'explain', 'plan', 'received', 'kernel', 'drain'] as const;
export type Method = (typeof METHODS)[number];

/** Longest request line accepted; a client sending more is cut off. */
const MAX_LINE = 1 << 20;

export class ControlError extends Error {
  constructor(
    readonly code: 'bad-request' | 'unknown-method' | 'bad-params' | 'internal' | 'unavailable',
    message: string,
  ) {
    super(message);
  }
}

export type Handler = (method: Method, params: Record<string, unknown>) => unknown;

/**
 * `$TSBGP_CONTROL`, else `/run/tsbgp/tsbgp.sock` for root, else
 * `$XDG_RUNTIME_DIR/tsbgp.sock`, else `<tmpdir>/tsbgp-<uid>/tsbgp.sock`: a
 * folder of the user's own (created 0700, refused when someone else owns it
 * or can write to it), never a name in /tmp itself that another local user
 * could create first.
 */
export function defaultControlPath(env: NodeJS.ProcessEnv = process.env, uid: number = process.getuid?.() ?? 0): string {
  // Set in the DaemonSet so `kubectl exec … tsbgp status` finds the agent's socket without flags.
  if (env.TSBGP_CONTROL) return env.TSBGP_CONTROL;
  if (uid === 0) return '/run/tsbgp/tsbgp.sock';
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, 'tsbgp.sock');
  return join(env.TMPDIR || '/tmp', `tsbgp-${uid}`, 'tsbgp.sock');
}

/** The socket's permissions: owner only (the CLI runs as the agent's user, or root). */
const CONTROL_SOCKET_MODE = 0o600;

const myUid = (): number => process.getuid?.() ?? 0;

/**
 * The folder of the control socket must be ours (or root's) and not
 * writable by others unless sticky (as /tmp): else another user could put
 * their own socket in its place. Throws naming the folder and what is wrong.
 */
async function checkSocketFolder(dir: string): Promise<void> {
  const st = await lstat(dir);
  if (!st.isDirectory()) throw new Error(`control socket folder ${dir} is not a directory`);
  const uid = myUid();
  if (st.uid !== uid && st.uid !== 0)
    throw new Error(`control socket folder ${dir} belongs to uid ${st.uid}, not to this user (uid ${uid}) or root: refusing to put the socket there`);
  const sticky = (st.mode & 0o1000) !== 0;
  if ((st.mode & 0o022) !== 0 && !sticky)
    throw new Error(
      `control socket folder ${dir} is writable by other users (mode ` +
        `${(st.mode & 0o7777).toString(8)}): refusing to put the socket there (chmod go-w, or choose --control)`,
    );
}

/** The CLI's side: a socket not owned by us or root may be someone else's impostor. Missing: left to connect() to report. */
async function checkSocketOwner(path: string): Promise<void> {
  let st;
  try {
    st = await lstat(path);
  } catch {
    return;
  }
  const uid = myUid();
  if (!st.isSocket()) throw new ControlError('unavailable', `${path} is not a socket: refusing to talk to it`);
  if (st.uid !== uid && st.uid !== 0)
    throw new ControlError(
      'unavailable',
      `control socket ${path} belongs to uid ${st.uid}, not to this user (uid ${uid}) or root: refusing to talk to it (another user may have created it)`,
    );
}

/** Parses one request line; throws ControlError naming what is wrong. */
export function parseRequest(line: string): { id: unknown; method: Method; params: Record<string, unknown> } {
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    throw new ControlError('bad-request', `request is not JSON: ${(e as Error).message}`);
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) throw new ControlError('bad-request', 'request must be a JSON object with "method"');
  const { method, params } = msg as { method?: unknown; params?: unknown };
  if (typeof method !== 'string') throw new ControlError('bad-request', 'request "method" must be a string');
  if (!(METHODS as readonly string[]).includes(method))
    throw new ControlError('unknown-method', `unknown method ${JSON.stringify(method)} (expected one of ${METHODS.join(', ')})`);
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params)))
    throw new ControlError('bad-params', 'request "params" must be an object');
  return { id: (msg as { id?: unknown }).id ?? null, method: method as Method, params: (params ?? {}) as Record<string, unknown> };
}

function idOf(line: string): unknown {
  try {
    const m = JSON.parse(line) as { id?: unknown };
    return typeof m === 'object' && m !== null && 'id' in m ? m.id : null;
  } catch {
    return null;
  }
}

async function isLive(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

export interface ControlServer {
  readonly path: string;
  close(): Promise<void>;
}

/** Listens on `path` (creating its folder, replacing a stale socket file; refusing if another agent answers). */
export async function startControlServer(path: string, handler: Handler, onError?: (e: Error) => void): Promise<ControlServer> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await checkSocketFolder(dirname(path));
  if (await isLive(path)) throw new Error(`control socket ${path} is in use by another process`);
  await unlink(path).catch(() => undefined);
  const sockets = new Set<Socket>();
  const server: Server = createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => undefined);
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('data', (chunk: string) => {
      buf += chunk;
      if (buf.length > MAX_LINE && !buf.includes('\n')) {
        sock.end(`${JSON.stringify({ id: null, error: { code: 'bad-request', message: `request longer than ${MAX_LINE} bytes` } })}\n`);
        buf = '';
        return;
      }
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) void answer(sock, line);
      }
    });
  });
  const answer = async (sock: Socket, line: string) => {
    let reply: unknown;
    try {
      const req = parseRequest(line);
      try {
        reply = { id: req.id, result: await handler(req.method, req.params) };
      } catch (e) {
        const err = e instanceof ControlError ? e : new ControlError('internal', e instanceof Error ? e.message : String(e));
        if (!(e instanceof ControlError)) onError?.(e as Error);
        reply = { id: req.id, error: { code: err.code, message: err.message } };
      }
    } catch (e) {
      const err = e as ControlError;
      reply = { id: idOf(line), error: { code: err.code, message: err.message } };
    }
    if (!sock.destroyed) sock.write(`${JSON.stringify(reply)}\n`);
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // The socket file is made by bind() inside listen(): with this umask it never exists with wider permissions than 0600, whatever the process umask.
    const umask = process.umask(0o177);
    try {
      server.listen(path, () => (server.off('error', reject), resolve()));
    } finally {
      process.umask(umask);
    }
  });
  await chmod(path, CONTROL_SOCKET_MODE);
  server.on('error', (e) => onError?.(e));
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** One request, one reply; rejects with ControlError on an error reply, with a clear message when no agent listens. */
export async function controlRequest(path: string, method: string, params: Record<string, unknown> = {}, timeoutMs = 5000): Promise<unknown> {
  await checkSocketOwner(path);
  return new Promise((resolve, reject) => {
    const sock = connect(path);
    let buf = '';
    const timer = setTimeout(() => (sock.destroy(), reject(new ControlError('unavailable', `no reply from ${path} within ${timeoutMs} ms`))), timeoutMs);
    const done = (fn: () => void) => (clearTimeout(timer), sock.destroy(), fn());
    sock.setEncoding('utf8');
    sock.once('connect', () => sock.write(`${JSON.stringify({ id: 1, method, params })}\n`));
    sock.on('error', (e: NodeJS.ErrnoException) =>
      done(() =>
        reject(
          new ControlError(
            'unavailable',
            e.code === 'ENOENT' || e.code === 'ECONNREFUSED'
              ? `no tsbgp agent at ${path} (${e.code}); is it running? (--control SOCKET)`
              : `control socket ${path}: ${e.message}`,
          ),
        ),
      ),
    );
    sock.on('data', (chunk: string) => {
      buf += chunk;
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      let reply: { result?: unknown; error?: { code: ControlError['code']; message: string } };
      try {
        reply = JSON.parse(buf.slice(0, nl)) as typeof reply;
      } catch {
        return done(() => reject(new ControlError('internal', 'agent sent a reply that is not JSON')));
      }
      if (reply.error) done(() => reject(new ControlError(reply.error!.code, reply.error!.message)));
      else done(() => resolve(reply.result));
    });
  });
}
