import { connect, createServer } from 'node:net';
import { chmod, chown, lstat, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ControlError, controlRequest, defaultControlPath, parseRequest, startControlServer, type ControlServer } from '../../src/agent/control.js';

const servers: ControlServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function socketPath(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'tsbgp-ctl-')), 'sub', 'tsbgp.sock');
}

/** Sends raw lines on one connection and collects `count` reply lines. */
function raw(path: string, text: string, count: number): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let buf = '';
    s.setEncoding('utf8');
    s.on('connect', () => s.write(text));
    s.on('error', reject);
    s.on('data', (c: string) => {
      buf += c;
      const lines = buf.split('\n').filter(Boolean);
      if (lines.length >= count) {
        s.destroy();
        resolve(lines.map((l) => JSON.parse(l) as unknown));
      }
    });
  });
}

describe('control socket', () => {
  it('round trip: a request gets the handler result; params reach the handler', async () => {
    const path = await socketPath();
    const seen: unknown[] = [];
    servers.push(
      await startControlServer(path, (method, params) => {
        seen.push([method, params]);
        return { method, n: 42 };
      }),
    );
    expect(await controlRequest(path, 'status')).toEqual({ method: 'status', n: 42 });
    expect(await controlRequest(path, 'routes', { peer: '192.0.2.20' })).toEqual({ method: 'routes', n: 42 });
    expect(seen).toEqual([
      ['status', {}],
      ['routes', { peer: '192.0.2.20' }],
    ]);
  });

  it('malformed and unknown requests get error replies on the same connection, and the server carries on', async () => {
    const path = await socketPath();
    servers.push(await startControlServer(path, async (method) => ({ ok: method })));
    const replies = await raw(path, '{not json\n[1,2]\n{"id":7,"method":"reboot"}\n{"id":8,"method":"plan","params":3}\n{"id":9,"method":"plan"}\n', 5);
    expect(replies).toEqual([
      { id: null, error: { code: 'bad-request', message: expect.stringContaining('request is not JSON') } },
      { id: null, error: { code: 'bad-request', message: 'request must be a JSON object with "method"' } },
      { id: 7, error: { code: 'unknown-method', message: 'unknown method "reboot" (expected one of status, routes, explain, plan, received, kernel, drain)' } },
      { id: 8, error: { code: 'bad-params', message: 'request "params" must be an object' } },
      { id: 9, result: { ok: 'plan' } },
    ]);
    expect(await controlRequest(path, 'status')).toEqual({ ok: 'status' });
  });

  it('a handler error becomes an error reply (ControlError keeps its code; anything else is internal)', async () => {
    const path = await socketPath();
    const internal: Error[] = [];
    servers.push(
      await startControlServer(
        path,
        (method) => {
          if (method === 'explain') throw new ControlError('bad-params', '"query" must be a prefix');
          throw new Error('boom');
        },
        (e) => internal.push(e),
      ),
    );
    await expect(controlRequest(path, 'explain')).rejects.toMatchObject({ code: 'bad-params', message: '"query" must be a prefix' });
    await expect(controlRequest(path, 'plan')).rejects.toMatchObject({ code: 'internal', message: 'boom' });
    expect(internal.map((e) => e.message)).toEqual(['boom']);
  });

  it('replaces a stale socket file, refuses one another process answers on', async () => {
    const path = await socketPath();
    const dir = join(path, '..');
    // A live listener: refused.
    servers.push(await startControlServer(path, () => 1));
    await expect(startControlServer(path, () => 2)).rejects.toThrow(`control socket ${path} is in use by another process`);
    // A leftover file with nobody behind it: replaced.
    const stale = join(dir, 'stale.sock');
    await writeFile(stale, '');
    servers.push(await startControlServer(stale, () => 3));
    expect(await controlRequest(stale, 'status')).toBe(3);
  });

  it('a client names the path when no agent listens, and times out on a silent one', async () => {
    const path = await socketPath();
    await expect(controlRequest(path, 'status')).rejects.toThrow(`no tsbgp agent at ${path} (ENOENT)`);
    const silentPath = join(path, '..', '..', 'silent.sock');
    const held: import('node:net').Socket[] = [];
    const silent = createServer((sock) => void held.push(sock));
    await new Promise<void>((r) => silent.listen(silentPath, r));
    await expect(controlRequest(silentPath, 'status', {}, 200)).rejects.toThrow('no reply');
    for (const sock of held) sock.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  });

  it('parseRequest defaults params and id', () => {
    expect(parseRequest('{"method":"status"}')).toEqual({ id: null, method: 'status', params: {} });
    expect(() => parseRequest('{"method":5}')).toThrow('"method" must be a string');
  });

  it('default path: /run for root, XDG_RUNTIME_DIR, else a private folder per uid (never a name another user can take in /tmp)', () => {
    expect(defaultControlPath({}, 0)).toBe('/run/tsbgp/tsbgp.sock');
    expect(defaultControlPath({ XDG_RUNTIME_DIR: '/run/user/1000' }, 1000)).toBe('/run/user/1000/tsbgp.sock');
    expect(defaultControlPath({}, 1000)).toBe('/tmp/tsbgp-1000/tsbgp.sock');
    expect(defaultControlPath({ TSBGP_CONTROL: '/var/run/tsbgp/tsbgp.sock' }, 0)).toBe('/var/run/tsbgp/tsbgp.sock');
  });
});

describe('control socket permissions (issue 14 §5c)', () => {
  it('the socket is 0600 and a new folder 0700 whatever the umask', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-perm-'));
    const path = join(dir, 'sub', 'tsbgp.sock');
    const old = process.umask(0);
    let s: ControlServer;
    try {
      s = await startControlServer(path, () => 'ok');
    } finally {
      process.umask(old);
    }
    servers.push(s);
    expect((await lstat(path)).mode & 0o777).toBe(0o600);
    expect((await lstat(join(dir, 'sub'))).mode & 0o777).toBe(0o700);
    expect(await controlRequest(path, 'status')).toBe('ok');
  });

  it('refuses a socket folder writable by others, naming it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-perm-'));
    await chmod(dir, 0o777);
    await expect(startControlServer(join(dir, 'tsbgp.sock'), () => 'ok')).rejects.toThrow(`control socket folder ${dir} is writable by other users (mode 777)`);
  });

  it.runIf(process.getuid?.() === 0)('the CLI refuses a socket owned by another user (an impostor), and says so', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-perm-'));
    const path = join(dir, 'tsbgp.sock');
    const s = await startControlServer(path, () => 'impostor table');
    servers.push(s);
    await chown(path, 12345, 12345);
    await expect(controlRequest(path, 'status')).rejects.toThrow(
      `control socket ${path} belongs to uid 12345, not to this user (uid 0) or root: refusing to talk to it`,
    );
  });
});
