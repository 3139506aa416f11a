import { readFileSync } from 'node:fs';
import { kernelRoutesText, type AgentKernelOptions, type KernelRoutesJson } from './kernel.js';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { WriterKind } from '../kernel/index.js';
import { closest, plan as planFor, routerIdSetting, stateOf } from '../kubernetes/index.js';
import { BgpSpeaker } from '../speaker/index.js';
import { runAgent, type AgentOptions, type RoutesJson, type SpeakerFactory, type StatusJson } from './agent.js';
import { controlRequest, defaultControlPath } from './control.js';
// The Kubernetes API source loads only for --kubeconfig/--in-cluster.
import type { KubernetesSourceOptions } from './sources/kube-source.js';
import { createLogger, parseLevel, type Level } from './log.js';
// prom-client (metrics.ts) loads only with --metrics.
import type { AgentMetrics } from './metrics.js';
import { parseMetricsAddress, startMetricsServer, type MetricsAddress } from './metrics-server.js';
import { renderExplain, renderPlan, renderRoutes, renderStatusJson } from './render.js';
import { loadLayers } from './sources/index.js';
import { endpointStatusDirFromEnv, loadEndpointStatus } from './sources/workload-status.js';
import { COMMAND_HELP, commandHelp, wantsHelp } from './help.js';
import { renderPeerDetail } from './peer-view.js';
import { renderReceived, type ReceivedJson } from './received-view.js';
import { parseMaxPrefixes, type AgentMaxPrefixes } from './max-prefixes.js';
import { DRAIN_CLOSES, type DrainClose, type DrainStatusJson } from './drain.js';
import { formatError, parseExplainQuery, planJson, type ExplainJson } from './views.js';

const USAGE = `usage: tsbgp <command> [options]

commands:
  agent    [--node NAME] (--manifests PATH... | --kubeconfig PATH | --in-cluster)
           [--control SOCKET] [--log-level LEVEL] [--listen-port N]
           [--metrics ADDR:PORT]  (Prometheus /metrics, /healthz, /readyz: docs/metrics.md)
           [--max-prefixes LIMIT[,ACTION[,WARN%]]]  (per peer and family; default
           20000,block,80; 0 for none: docs/limits.md)
           [--kernel on|off] [--kernel-table T] [--kernel-protocol N] [--kernel-metric N]
           [--kernel-writer netlink|iproute2]
           (program learned routes into the kernel as BIRD does: src/kernel/README.md; default off)
           [--endpoint-status-dir DIR|none]  (Felix's workload status files, for BGPPeers with
           localWorkloadSelector; default $CALICO_ENDPOINT_STATUS_PATH_PREFIX/endpoint-status,
           else /var/run/calico/endpoint-status)
           [--drain-time SECONDS] [--drain-on-cordon]  (RFC 8326 drain on SIGTERM, default 30 s;
           0: no drain: docs/upgrades.md)
           [--drain-close hard-reset|keep-stale]  (how sessions close after the drain; default
           hard-reset: docs/drain-lab.md)
           run the node agent: advertise this node's Services and pools over BGP;
           the node name defaults to $NODENAME, then $CALICO_K8S_NODE_REF
  status   [PEER] [--json] [--control SOCKET]
           BGP sessions (calicoctl node status), configuration errors, refused advertisements;
           with PEER: that peer in full (uptime, capabilities, prefixes, messages, last error)
  routes   [--peer IP | --received IP | --kernel] [--json] [--control SOCKET]
           what is advertised to each peer, and why; --received: what a peer sends us;
           --kernel: each route in the kernel (installed, or refused and why)
  drain    [--cancel] [--json] [--control SOCKET]
           re-advertise every route with GRACEFUL_SHUTDOWN (RFC 8326) and hold, sessions up,
           until --cancel (docs/upgrades.md)
  explain  PREFIX|NAMESPACE/SERVICE [--json] [--control SOCKET]
           why a prefix or a Service's IPs are (or are not) advertised to each peer
  plan     --node NAME --manifests PATH... [--listen-port N] [--max-prefixes L[,A[,W%]]] [--strict] [--json]
           [--endpoint-status-dir DIR]  (the node's workload status files; default none)
           the same offline, without sessions; exits 1 when the plan has errors
           (--strict: or warnings)
  version  print the version
  help     [COMMAND]  this text, or one command's usage (also: tsbgp COMMAND --help)

The agent reads exactly one source: manifest files (--manifests), or the
Kubernetes API through a kubeconfig (--kubeconfig) or the pod's service
account (--in-cluster, KUBERNETES_SERVICE_HOST/PORT). Each --manifests PATH
(a file or folder) is a layer: a resource in a later layer replaces the same
kind/namespace/name in an earlier one. Extra paths after the options count as
further layers. The control socket defaults to $TSBGP_CONTROL when set.
--json output is a stable contract (docs/json-output.md).
`;

export interface CliIO {
  readonly stdout?: (text: string) => void;
  readonly stderr?: (text: string) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** The speaker the agent drives; default: BgpSpeaker from src/speaker/speaker.ts. */
  readonly speakerFactory?: SpeakerFactory;
  readonly now?: () => Date;
  /** Log lines of `agent` (default stderr). */
  readonly log?: (line: string) => void;
  /** Timings of the Kubernetes API source (tests). */
  readonly kubernetes?: KubernetesSourceOptions;
}

export class UsageError extends Error {}

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
const AGENT: Options = {
  ...MANIFESTS,
  ...CONTROL,
  kubeconfig: { type: 'string' },
  'in-cluster': { type: 'boolean' },
  'log-level': { type: 'string' },
  'listen-port': { type: 'string' },
  metrics: { type: 'string' },
  'max-prefixes': { type: 'string' },
  kernel: { type: 'string' },
  'endpoint-status-dir': { type: 'string' },
  'kernel-table': { type: 'string' },
  'kernel-protocol': { type: 'string' },
  'kernel-metric': { type: 'string' },
  'kernel-writer': { type: 'string' },
  'drain-time': { type: 'string' },
  'drain-on-cordon': { type: 'boolean' },
  'drain-close': { type: 'string' },
};
/** Each command's flags, as its parser takes them (help.test.ts checks that each command's help lists exactly these). */
export const COMMAND_FLAGS: Readonly<Record<string, Options>> = {
  agent: AGENT,
  status: { ...JSON_FLAG, ...CONTROL },
  routes: { ...JSON_FLAG, ...CONTROL, peer: { type: 'string' }, received: { type: 'string' }, kernel: { type: 'boolean' } },
  explain: { ...JSON_FLAG, ...CONTROL },
  drain: { ...JSON_FLAG, ...CONTROL, cancel: { type: 'boolean' } },
  plan: {
    ...MANIFESTS,
    ...JSON_FLAG,
    'listen-port': { type: 'string' },
    'max-prefixes': { type: 'string' },
    strict: { type: 'boolean' },
    'endpoint-status-dir': { type: 'string' },
  },
  version: {},
  help: {},
};

function parse(cmd: string, args: string[], options: Options, positionals: 'none' | 'some') {
  try {
    const r = parseArgs({ args, options, strict: true, allowPositionals: positionals === 'some' });
    return r as { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] };
  } catch (e) {
    throw new UsageError(`${cmd}: ${flagError((e as Error).message, options)}`);
  }
}

/**
 * node:util's parser errors in our words: an unknown flag with a did-you-mean
 * and the command's flags (node's text quotes unevenly and talks about
 * positional arguments); the others ("Option '--node <value>' argument
 * missing") name the flag already and pass through.
 */
function flagError(message: string, options: Options): string {
  const flags = Object.keys(options).map((name) => `--${name}`);
  const unknown = /^Unknown option '([^']*)'/.exec(message);
  if (unknown) {
    const guess = closest(unknown[1], flags);
    return `unknown flag ${unknown[1]}${guess ? ` (did you mean ${guess}?)` : ''}; its flags: ${flags.join(', ') || 'none'}`;
  }
  const positional = /^Unexpected argument '([^']*)'/.exec(message);
  if (positional) return `unexpected argument ${JSON.stringify(positional[1])}: this command takes flags only (${flags.join(', ') || 'none'})`;
  return message;
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

function maxPrefixesFlag(cmd: string, text: string | undefined): { maxPrefixes?: AgentMaxPrefixes | null } {
  if (text === undefined) return {};
  try {
    return { maxPrefixes: parseMaxPrefixes(text) ?? null };
  } catch (e) {
    throw new UsageError(`${cmd}: ${(e as Error).message}`);
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

export type AgentSource =
  { readonly kind: 'manifests'; readonly paths: string[] } | { readonly kind: 'kubeconfig'; readonly path: string } | { readonly kind: 'in-cluster' };

export interface AgentArgs {
  readonly node: string;
  readonly source: AgentSource;
  readonly control?: string;
  readonly logLevel?: Level;
  readonly listenPort?: number;
  readonly metrics?: MetricsAddress;
  /** `--max-prefixes`; undefined: the default; null: none. */
  readonly maxPrefixes?: AgentMaxPrefixes | null;
  readonly kernel?: AgentKernelOptions;
  /** `--endpoint-status-dir`: Felix's workload status files (false: `none`). */
  readonly endpointStatusDir: string | false;
  /** `--drain-time` seconds; `--drain-on-cordon`. */
  readonly drainTime?: number;
  readonly drainOnCordon?: boolean;
  /** `--drain-close`. */
  readonly drainClose?: DrainClose;
}

/** `--endpoint-status-dir DIR|none`; unset: confd's $CALICO_ENDPOINT_STATUS_PATH_PREFIX, else Calico's default. */
function endpointStatusFlag(cmd: string, text: string | undefined, env: NodeJS.ProcessEnv): string | false {
  if (text === '') throw new UsageError(`${cmd}: --endpoint-status-dir must name a directory (or "none")`);
  if (text === 'none') return false;
  return text ?? endpointStatusDirFromEnv(env);
}

/** What `--kernel-writer` takes: the kernel FIB's writers (src/kernel/route-writer.ts). */
const KERNEL_WRITERS: readonly WriterKind[] = ['netlink', 'iproute2'];

/** --kernel on|off and its settings (numbers checked here; the table name when the kernel FIB starts). */
function kernelFlags(cmd: string, values: Record<string, unknown>): { kernel?: AgentKernelOptions } {
  const on = values.kernel as string | undefined;
  if (on !== undefined && on !== 'on' && on !== 'off') throw new UsageError(`${cmd}: --kernel must be "on" or "off", got ${JSON.stringify(on)}`);
  const num = (flag: string, lo: number, hi: number): number | undefined => {
    const t = values[flag] as string | undefined;
    if (t === undefined) return undefined;
    if (!/^\d+$/.test(t) || Number(t) < lo || Number(t) > hi) throw new UsageError(`${cmd}: --${flag} must be a number ${lo}-${hi}, got ${JSON.stringify(t)}`);
    return Number(t);
  };
  const protocol = num('kernel-protocol', 1, 255);
  if (protocol === 2) throw new UsageError(`${cmd}: --kernel-protocol 2 is the kernel's own (connected routes): pick another`);
  const metric = num('kernel-metric', 0, 0xffffffff);
  const tableText = values['kernel-table'] as string | undefined;
  if (tableText === '') throw new UsageError(`${cmd}: --kernel-table must name a table`);
  const table = tableText === undefined ? undefined : /^\d+$/.test(tableText) ? Number(tableText) : tableText;
  const writer = values['kernel-writer'] as string | undefined;
  if (writer !== undefined && !(KERNEL_WRITERS as readonly string[]).includes(writer))
    throw new UsageError(`${cmd}: --kernel-writer must be ${KERNEL_WRITERS.map((w) => `"${w}"`).join(' or ')}, got ${JSON.stringify(writer)}`);
  if (on !== 'on') {
    if (protocol !== undefined || metric !== undefined || table !== undefined || writer !== undefined)
      throw new UsageError(`${cmd}: --kernel-table/--kernel-protocol/--kernel-metric/--kernel-writer need --kernel on`);
    return {};
  }
  return {
    kernel: {
      ...(table !== undefined ? { table } : {}),
      ...(protocol !== undefined ? { protocol } : {}),
      ...(metric !== undefined ? { metric } : {}),
      ...(writer !== undefined ? { writer: writer as WriterKind } : {}),
    },
  };
}

/** `tsbgp agent` flags → settings; throws UsageError naming the flag. Pure but for `env` (also used by the deploy/ test). */
export function parseAgentArgs(args: string[], env: NodeJS.ProcessEnv = {}): AgentArgs {
  const cmd = 'agent';
  const { values, positionals } = parse(cmd, args, AGENT, 'some');
  const flagNode = values.node as string | undefined;
  if (flagNode === '') throw new UsageError(`${cmd}: --node must not be empty`);
  const node = flagNode ?? (env.NODENAME || undefined) ?? (env.CALICO_K8S_NODE_REF || undefined);
  if (!node) throw new UsageError(`${cmd}: --node NAME is required (or set NODENAME or CALICO_K8S_NODE_REF)`);
  const paths = [...((values.manifests as string[] | undefined) ?? []), ...positionals];
  const kubeconfig = values.kubeconfig as string | undefined;
  const inCluster = values['in-cluster'] === true;
  const given = [paths.length > 0 && '--manifests', kubeconfig !== undefined && '--kubeconfig', inCluster && '--in-cluster'].filter(
    (x): x is string => typeof x === 'string',
  );
  if (given.length === 0) throw new UsageError(`${cmd}: a source is required: --manifests PATH, --kubeconfig PATH or --in-cluster`);
  if (given.length > 1) throw new UsageError(`${cmd}: ${given.join(' and ')} are exclusive: give exactly one source`);
  if (kubeconfig === '') throw new UsageError(`${cmd}: --kubeconfig must name a file`);
  const source: AgentSource =
    paths.length > 0 ? { kind: 'manifests', paths } : kubeconfig !== undefined ? { kind: 'kubeconfig', path: kubeconfig } : { kind: 'in-cluster' };
  return {
    node,
    source,
    control: values.control as string | undefined,
    logLevel: level(cmd, values['log-level'] as string | undefined),
    listenPort: port(cmd, values['listen-port'] as string | undefined),
    metrics: metricsFlag(cmd, values.metrics as string | undefined),
    ...maxPrefixesFlag(cmd, values['max-prefixes'] as string | undefined),
    ...kernelFlags(cmd, values),
    endpointStatusDir: endpointStatusFlag(cmd, values['endpoint-status-dir'] as string | undefined, env),
    ...drainFlags(cmd, values),
  };
}

/** --drain-time SECONDS (0 to 3600; 0: no drain), --drain-on-cordon and --drain-close hard-reset|keep-stale. */
function drainFlags(cmd: string, values: Record<string, unknown>): { drainTime?: number; drainOnCordon?: boolean; drainClose?: DrainClose } {
  const t = values['drain-time'] as string | undefined;
  if (t !== undefined && (!/^\d+$/.test(t) || Number(t) > 3600))
    throw new UsageError(`${cmd}: --drain-time must be 0 to 3600 seconds, got ${JSON.stringify(t)}`);
  const c = values['drain-close'] as string | undefined;
  if (c !== undefined && !(DRAIN_CLOSES as readonly string[]).includes(c))
    throw new UsageError(`${cmd}: --drain-close must be one of ${DRAIN_CLOSES.join(', ')}, got ${JSON.stringify(c)}`);
  return {
    ...(t !== undefined ? { drainTime: Number(t) } : {}),
    ...(values['drain-on-cordon'] === true ? { drainOnCordon: true } : {}),
    ...(c !== undefined ? { drainClose: c as DrainClose } : {}),
  };
}

const defaultSpeakerFactory: SpeakerFactory = (opts) => new BgpSpeaker(opts);

export async function main(argv: string[], io: CliIO = {}): Promise<number> {
  const out = io.stdout ?? ((t: string) => void process.stdout.write(t));
  const err = io.stderr ?? ((t: string) => void process.stderr.write(t));
  const env = io.env ?? process.env;
  const now = io.now ?? (() => new Date());
  const [cmd, ...rest] = argv;
  const controlPath = (v: Record<string, unknown>) => (typeof v.control === 'string' ? v.control : defaultControlPath(env));
  const print = (json: boolean, value: unknown, text: () => string) => out(json ? `${JSON.stringify(value, null, 2)}\n` : `${text().trimEnd()}\n`);
  try {
    if (cmd !== undefined && COMMAND_HELP[cmd] && wantsHelp(rest)) {
      out(commandHelp(cmd, defaultControlPath(env)) ?? '');
      return 0;
    }
    switch (cmd) {
      case 'version':
      case '--version':
        out(`tsbgp ${version()}\n`);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h': {
        const topic = cmd === 'help' ? rest[0] : undefined;
        if (topic === undefined) out(USAGE);
        else if (COMMAND_HELP[topic]) out(commandHelp(topic, defaultControlPath(env)) ?? '');
        else throw new UsageError(`help: unknown command ${JSON.stringify(topic)} (commands: ${Object.keys(COMMAND_HELP).join(', ')})`);
        return 0;
      }
      case 'agent': {
        const a = parseAgentArgs(rest, env);
        const logger = createLogger({ level: a.logLevel ?? 'info', now, ...(io.log ? { write: io.log } : {}) });
        let inputs: Pick<AgentOptions, 'manifests' | 'source' | 'events' | 'nodeStatus'>;
        if (a.source.kind === 'manifests') inputs = { manifests: a.source.paths };
        else {
          const { kubeConfigFor, kubernetesEvents, kubernetesSource } = await import('./sources/kube-source.js');
          const { NodeStatusReporter } = await import('./sources/node-status-reporter.js');
          const kc = kubeConfigFor(a.source, env);
          const source = kubernetesSource(kc, io.kubernetes);
          const events = kubernetesEvents(kc, source, { host: a.node, onError: (e) => logger.warn(`Kubernetes Event not written: ${e.message}`) });
          // CalicoNodeStatus requests for this node, answered through the same Calico API the source reads.
          const reporter = new NodeStatusReporter({ client: kc, node: a.node, calicoApi: io.kubernetes?.calicoApi, onError: (e) => logger.warn(e.message) });
          inputs = { source, events, nodeStatus: reporter };
        }
        const speakerFactory = io.speakerFactory ?? defaultSpeakerFactory;
        const metrics: AgentMetrics | undefined = a.metrics ? new (await import('./metrics.js')).AgentMetrics() : undefined;
        const server = metrics && a.metrics ? await startMetricsServer(metrics, a.metrics, (e) => err(`tsbgp agent: metrics: ${e.message}\n`)) : undefined;
        try {
          const agent = await runAgent({
            node: a.node,
            ...inputs,
            version: version(),
            control: a.control ?? defaultControlPath(env),
            logLevel: a.logLevel,
            logger,
            listenPort: a.listenPort,
            speakerFactory,
            now,
            metrics,
            maxPrefixes: a.maxPrefixes,
            kernel: a.kernel,
            endpointStatusDir: a.endpointStatusDir,
            drainTime: a.drainTime,
            drainOnCordon: a.drainOnCordon,
            drainClose: a.drainClose,
          });
          await agent.done;
        } finally {
          await server?.close();
        }
        return 0;
      }
      case 'status': {
        const { values, positionals } = parse(cmd, rest, COMMAND_FLAGS.status, 'some');
        if (positionals.length > 1) throw new UsageError(`status: expected at most one PEER, got ${positionals.length}`);
        const s = (await controlRequest(controlPath(values), 'status')) as StatusJson;
        if (positionals.length === 1) {
          const want = positionals[0];
          const p = s.peers.find((x) => x.address === want || x.id === want);
          if (!p) throw new Error(`no peer ${want} (peers: ${s.peers.map((x) => x.address).join(', ') || 'none'})`);
          print(values.json === true, p, () => renderPeerDetail(p, now()));
          return 0;
        }
        print(values.json === true, s, () => renderStatusJson(s, now()));
        return 0;
      }
      case 'routes': {
        const { values } = parse(cmd, rest, COMMAND_FLAGS.routes, 'none');
        if (values.kernel === true) {
          if (typeof values.peer === 'string' || typeof values.received === 'string')
            throw new UsageError('routes: --kernel shows the kernel side; it does not take --peer or --received');
          const r = (await controlRequest(controlPath(values), 'kernel', {})) as KernelRoutesJson;
          print(values.json === true, r, () => kernelRoutesText(r));
          return 0;
        }
        if (typeof values.received === 'string') {
          if (typeof values.peer === 'string') throw new UsageError('routes: --peer and --received are exclusive');
          const r = (await controlRequest(controlPath(values), 'received', { peer: values.received })) as ReceivedJson;
          print(values.json === true, r, () => renderReceived(r));
          return 0;
        }
        const params = typeof values.peer === 'string' ? { peer: values.peer } : {};
        const r = (await controlRequest(controlPath(values), 'routes', params)) as RoutesJson;
        print(values.json === true, r, () => renderRoutes(r));
        return 0;
      }
      case 'drain': {
        const { values } = parse(cmd, rest, COMMAND_FLAGS.drain, 'none');
        const r = (await controlRequest(controlPath(values), 'drain', values.cancel === true ? { cancel: true } : {})) as { draining: DrainStatusJson | null };
        print(values.json === true, r, () => {
          const d = r.draining;
          if (d === null) return 'not draining\n';
          const left = d.remainingSeconds > 0 ? `${d.remainingSeconds} s of the drain time left` : 'drain time passed';
          return `draining (${d.reason}) since ${d.since}: ${left}; then ${d.then}\n`;
        });
        return 0;
      }
      case 'explain': {
        const { values, positionals } = parse(cmd, rest, COMMAND_FLAGS.explain, 'some');
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
        const { values, positionals } = parse(cmd, rest, COMMAND_FLAGS.plan, 'some');
        const node = required(cmd, values, 'node');
        const manifests = manifestPaths(cmd, values, positionals);
        const listenPort = port(cmd, values['listen-port'] as string | undefined);
        const { maxPrefixes } = maxPrefixesFlag(cmd, values['max-prefixes'] as string | undefined);
        const loaded = await loadLayers(manifests);
        const state = stateOf(loaded.resources);
        state.routerIdSetting = routerIdSetting(); // as the agent: calico-node's CALICO_ROUTER_ID
        const statusDir = values['endpoint-status-dir'] as string | undefined;
        if (statusDir === '') throw new UsageError(`${cmd}: --endpoint-status-dir must name a directory`);
        const issues = [...loaded.issues];
        if (statusDir !== undefined) {
          const wl = await loadEndpointStatus(statusDir);
          for (const ev of wl.events) state.apply(ev);
          issues.push(...wl.issues);
        }
        const view = planJson(planFor(state, node), { issues, listenPort, maxPrefixes });
        print(values.json === true, view, () => renderPlan(view));
        if (view.errors.length > 0) {
          if (values.json === true)
            for (const e of view.errors)
              err(
                `tsbgp plan: ${e.file ? `${e.file}: ` : ''}${e.kind ? `${e.kind} ` : ''}` +
                  `${e.namespace ? `${e.namespace}/` : ''}${e.name ?? ''}${e.field ? `: ${e.field}` : ''}: ${e.message}\n`,
              );
          err(`tsbgp plan: ${view.errors.length} error${view.errors.length === 1 ? '' : 's'}\n`);
          return 1;
        }
        if (values.strict === true && view.warnings.length > 0) {
          for (const w of view.warnings) err(`tsbgp plan: warning: ${formatError(w)}\n`);
          err(`tsbgp plan: ${view.warnings.length} warning${view.warnings.length === 1 ? '' : 's'} (--strict)\n`);
          return 1;
        }
        return 0;
      }
      default: {
        const guess = closest(cmd, Object.keys(COMMAND_HELP));
        const didYouMean = guess ? ` (did you mean ${guess}?)` : '';
        err(`tsbgp: unknown command ${JSON.stringify(cmd)}${didYouMean}; commands: ${Object.keys(COMMAND_HELP).join(', ')}\nrun 'tsbgp help' for usage\n`);
        return 2;
      }
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
