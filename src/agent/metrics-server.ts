/**
 * The `--metrics ADDR:PORT` HTTP endpoint: /metrics (Prometheus text
 * format), /healthz and /readyz for kubelet probes, 404 for anything else.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import type { AgentMetrics } from './metrics.js';
import { TokenBucket } from './rate-limit.js';

export interface MetricsAddress {
  /** IP literal or host name; '' for every address. */
  readonly host: string;
  readonly port: number;
}

const HOSTNAME = /^(?=.{1,253}$)[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** Parses `ADDR:PORT`, `[IPv6]:PORT` or `:PORT` (every address); throws naming the flag and the text. */
export function parseMetricsAddress(text: string): MetricsAddress {
  const fail = (why?: string): never => {
    throw new Error(`--metrics: expected ADDR:PORT (e.g. 0.0.0.0:9900 or [::1]:9900), got ${JSON.stringify(text)}${why ? `: ${why}` : ''}`);
  };
  let host: string;
  let portText: string;
  const v6 = /^\[([^\]]*)\]:(.*)$/.exec(text);
  if (v6) {
    host = v6[1];
    portText = v6[2];
    if (isIP(host) !== 6) fail(`${JSON.stringify(host)} is not an IPv6 address`);
  } else {
    if (text.startsWith('[')) fail('no port after the bracketed address');
    const i = text.lastIndexOf(':');
    if (i < 0) fail('no port');
    host = text.slice(0, i);
    portText = text.slice(i + 1);
    if (host.includes(':')) fail('put an IPv6 address in brackets, as [::1]:9900');
    if (host !== '' && isIP(host) !== 4 && !HOSTNAME.test(host)) fail(`${JSON.stringify(host)} is not an IP address or host name`);
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) fail(`port ${JSON.stringify(portText)} is not 0-65535`);
  return { host, port: Number(portText) };
}

export interface MetricsServer {
  /** Where it listens (the real port when 0 was asked for). */
  readonly address: { readonly host: string; readonly port: number };
  close(): Promise<void>;
}

/**
 * Requests answered per endpoint class before 429 (Too Many Requests):
 * /metrics is cheap (O(peers)) but a loop of scrapes should not cost the
 * agent its CPU; the probes get more room. Burst and steady rate per second.
 */
export interface RateLimits {
  readonly metrics: { readonly burst: number; readonly perSecond: number };
  readonly probes: { readonly burst: number; readonly perSecond: number };
}

const DEFAULT_RATE_LIMITS: RateLimits = { metrics: { burst: 10, perSecond: 5 }, probes: { burst: 50, perSecond: 50 } };

export async function startMetricsServer(
  metrics: AgentMetrics,
  at: MetricsAddress,
  onError?: (e: Error) => void,
  opts: { limits?: RateLimits; now?: () => number } = {},
): Promise<MetricsServer> {
  const text = (res: ServerResponse, code: number, body: string) => {
    res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(body);
  };
  const limits = opts.limits ?? DEFAULT_RATE_LIMITS;
  const now = opts.now ?? (() => performance.now());
  const buckets = {
    metrics: new TokenBucket(limits.metrics.burst, limits.metrics.perSecond),
    probes: new TokenBucket(limits.probes.burst, limits.probes.perSecond),
  };
  const limited = (res: ServerResponse, b: TokenBucket): boolean => {
    if (b.take(now())) return false;
    res.setHeader('retry-after', String(b.retryAfter()));
    text(res, 429, 'too many requests\n');
    return true;
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return text(res, 405, 'method not allowed\n');
    }
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    switch (path) {
      case '/metrics': {
        if (limited(res, buckets.metrics)) return;
        const body = await metrics.metrics();
        res.writeHead(200, { 'content-type': metrics.contentType });
        return res.end(body);
      }
      case '/healthz':
      case '/readyz': {
        if (limited(res, buckets.probes)) return;
        const r = path === '/healthz' ? metrics.liveness() : metrics.readiness();
        return r.ready ? text(res, 200, r.detail ? `ok: ${r.detail}\n` : 'ok\n') : text(res, 503, `${r.reason}\n`);
      }
      default:
        return text(res, 404, 'not found: try /metrics, /healthz or /readyz\n');
    }
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((e: Error) => {
      onError?.(e);
      if (!res.headersSent) text(res, 500, `${e.message}\n`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host === '' ? undefined : at.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((e: Error) => {
    throw new Error(`--metrics: cannot listen on ${at.host.includes(':') ? `[${at.host}]` : at.host}:${at.port}: ${e.message}`);
  });
  const a = server.address() as AddressInfo;
  return {
    address: { host: a.address, port: a.port },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
