import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { plan as planFor, stateOf } from '../kubernetes/index.js';
import type { SpeakerApi, SpeakerOptions } from '../speaker/types.js';
import { runAgent, type RoutesJson, type StatusJson } from './agent.js';
import { controlRequest, defaultControlPath } from './control.js';
import { parseLevel, type Level } from './log.js';
import { AgentMetrics } from './metrics.js';
import { parseMetricsAddress, startMetricsServer } from './metrics-server.js';
import { renderExplain, renderPlan, renderRoutes, renderStatusJson } from './render.js';
import { loadLayers } from './sources.js';
import { parseExplainQuery, planJson, type ExplainJson } from './views.js';

const USAGE = `usage: tsbgp <command> [options]

commands:
  agent    --node NAME --manifests PATH... [--control SOCKET] [--log-level LEVEL] [--listen-port N]
           [--metrics ADDR:PORT]  (Prometheus /metrics, /healthz, /readyz: docs/metrics.md)
           run the node agent: advertise this node's Services and pools over BGP
  status   [--json] [--control SOCKET]
           BGP sessions (calicoctl node status), configuration errors, refused advertisements
  routes   [--peer IP] [--json] [--control SOCKET]
           what is advertised to each peer, and why
  explain  PREFIX|NAMESPACE/SERVICE [--json] [--control SOCKET]
           why a prefix or a Service's IPs are (or are not) advertised to each peer
  plan     --node NAME --manifests PATH... [--json]
           the same offline, without sessions; exits 1 when the plan has errors
  version  print the version
  help     this text

Each --manifests PATH (a file or folder) is a layer: a resource in a later
layer replaces the same kind/namespace/name in an earlier one. Extra paths
after the options count as further layers. --json output is a stable
contract (docs/json-output.md).
`;

export interface CliIO {
  readonly stdout?: (text: string) => void;
  readonly stderr?: (text: string) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** The speaker the agent drives; default: BgpSpeaker from src/speaker.ts. */
  readonly speakerFactory?: (opts: SpeakerOptions) => SpeakerApi;
  readonly now?: () => Date;
}

class UsageError extends Error {}

function version(): string {
  // dist/src/agent/cli.js when built, src/agent/cli.ts when run from source.
  for (const rel of ['../../../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'tsbgp') return pkg.version;
    } catch {
      // try the next location
    }
  }
  return 'unknown';
}

type Options = NonNullable<ParseArgsConfig['options']>;
const CONTROL: Options = { control: { type: 'string' } };
const JSON_FLAG: Options = { json: { type: 'boolean' } };
const MANIFESTS: Options = { node: { type: 'string' }, manifests: { type: 'string', multiple: true } };

function parse(cmd: string, args: string[], options: Options, positionals: 'none' | 'some') {
  try {
    const r = parseArgs({ args, options, strict: true, allowPositionals: positionals === 'some' });
    return r as { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] };
  } catch (e) {
    // node:util names the flag ("Unknown option '--x'", "Option '--node <value>' argument missing").
    throw new UsageError(`${cmd}: ${(e as Error).message}`);
  }
}

function required(cmd: string, values: Record<string, unknown>, flag: string): string {
  const v = values[flag];
  if (typeof v !== 'string' || v === '') throw new UsageError(`${cmd}: --${flag} is required`);
  return v;
}

function manifestPaths(cmd: string, values: Record<string, unknown>, extra: string[]): string[] {
  const paths = [...((values.manifests as string[] | undefined) ?? []), ...extra];
  if (paths.length === 0) throw new UsageError(`${cmd}: --manifests PATH is required`);
  return paths;
}

function port(cmd: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 65535) throw new UsageError(`${cmd}: --listen-port must be a port number 1-65535, got ${JSON.stringify(text)}`);
  return n;
}

function level(cmd: string, text: string | undefined): Level | undefined {
  if (text === undefined) return undefined;
  try {
    return parseLevel(text);
  } catch (e) {
    throw new UsageError(`${cmd}: --log-level: ${(e as Error).message}`);
  }
}

function metricsFlag(cmd: string, text: string | undefined) {
  if (text === undefined) return undefined;
  try {
    return parseMetricsAddress(text);
  } catch (e) {
    throw new UsageError(`${cmd}: ${(e as Error).message}`);
  }
}

async function defaultSpeakerFactory(): Promise<(opts: SpeakerOptions) => SpeakerApi> {
  // Resolved at run time so the agent builds before (and without) the speaker module.
  const specifier = '../speaker.js';
  let mod: { BgpSpeaker?: new (opts: SpeakerOptions) => SpeakerApi };
  try {
    mod = (await import(specifier)) as typeof mod;
  } catch (e) {
    throw new Error(`the BGP speaker (src/speaker.ts) is not available in this build: ${(e as Error).message}`);
  }
  if (typeof mod.BgpSpeaker !== 'function') throw new Error('src/speaker.ts does not export BgpSpeaker');
  const Speaker = mod.BgpSpeaker;
  return (opts) => new Speaker(opts);
}

export async function main(argv: string[], io: CliIO = {}): Promise<number> {
  const out = io.stdout ?? ((t: string) => void process.stdout.write(t));
  const err = io.stderr ?? ((t: string) => void process.stderr.write(t));
  const env = io.env ?? process.env;
  const now = io.now ?? (() => new Date());
  const [cmd, ...rest] = argv;
  const controlPath = (v: Record<string, unknown>) => (typeof v.control === 'string' ? v.control : defaultControlPath(env));
  const print = (json: boolean, value: unknown, text: () => string) => out(json ? `${JSON.stringify(value, null, 2)}\n` : `${text().trimEnd()}\n`);
  try {
    switch (cmd) {
      case 'version':
      case '--version':
        out(`tsbgp ${version()}\n`);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        out(USAGE);
        return 0;
      case 'agent': {
        const { values, positionals } = parse(cmd, rest, { ...MANIFESTS, ...CONTROL, 'log-level': { type: 'string' }, 'listen-port': { type: 'string' }, metrics: { type: 'string' } }, 'some');
        const node = required(cmd, values, 'node');
        const manifests = manifestPaths(cmd, values, positionals);
        const metricsAt = metricsFlag(cmd, values.metrics as string | undefined);
        const logLevel = level(cmd, values['log-level'] as string | undefined);
        const listenPort = port(cmd, values['listen-port'] as string | undefined);
        const speakerFactory = io.speakerFactory ?? (await defaultSpeakerFactory());
        const metrics = metricsAt ? new AgentMetrics() : undefined;
        const server = metrics && metricsAt ? await startMetricsServer(metrics, metricsAt, (e) => err(`tsbgp agent: metrics: ${e.message}\n`)) : undefined;
        try {
          const agent = await runAgent({ node, manifests, control: controlPath(values), logLevel, listenPort, speakerFactory, now, metrics });
          await agent.done;
        } finally {
          await server?.close();
        }
        return 0;
      }
      case 'status': {
        const { values } = parse(cmd, rest, { ...JSON_FLAG, ...CONTROL }, 'none');
        const s = (await controlRequest(controlPath(values), 'status')) as StatusJson;
        print(values.json === true, s, () => renderStatusJson(s, now()));
        return 0;
      }
      case 'routes': {
        const { values } = parse(cmd, rest, { ...JSON_FLAG, ...CONTROL, peer: { type: 'string' } }, 'none');
        const params = typeof values.peer === 'string' ? { peer: values.peer } : {};
        const r = (await controlRequest(controlPath(values), 'routes', params)) as RoutesJson;
        print(values.json === true, r, () => renderRoutes(r));
        return 0;
      }
      case 'explain': {
        const { values, positionals } = parse(cmd, rest, { ...JSON_FLAG, ...CONTROL }, 'some');
        if (positionals.length !== 1) throw new UsageError(`explain: expected one PREFIX or NAMESPACE/SERVICE, got ${positionals.length}`);
        try {
          parseExplainQuery(positionals[0]);
        } catch (e) {
          throw new UsageError(`explain: ${(e as Error).message}`);
        }
        const x = (await controlRequest(controlPath(values), 'explain', { query: positionals[0] })) as ExplainJson;
        print(values.json === true, x, () => renderExplain(x));
        return 0;
      }
      case 'plan': {
        const { values, positionals } = parse(cmd, rest, { ...MANIFESTS, ...JSON_FLAG, 'listen-port': { type: 'string' } }, 'some');
        const node = required(cmd, values, 'node');
        const manifests = manifestPaths(cmd, values, positionals);
        const listenPort = port(cmd, values['listen-port'] as string | undefined);
        const loaded = await loadLayers(manifests);
        const view = planJson(planFor(stateOf(loaded.resources), node), { issues: loaded.issues, listenPort });
        print(values.json === true, view, () => renderPlan(view));
        if (view.errors.length > 0) {
          if (values.json === true) for (const e of view.errors) err(`tsbgp plan: ${e.file ? `${e.file}: ` : ''}${e.kind ? `${e.kind} ` : ''}${e.namespace ? `${e.namespace}/` : ''}${e.name ?? ''}${e.field ? `: ${e.field}` : ''}: ${e.message}\n`);
          err(`tsbgp plan: ${view.errors.length} error${view.errors.length === 1 ? '' : 's'}\n`);
          return 1;
        }
        return 0;
      }
      default:
        err(`tsbgp: unknown command ${JSON.stringify(cmd)}\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    if (e instanceof UsageError) {
      err(`tsbgp ${e.message}\nrun 'tsbgp help' for usage\n`);
      return 2;
    }
    err(`tsbgp${cmd ? ` ${cmd}` : ''}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}
