/**
 * `--kubeconfig PATH` / `--in-cluster`: the Kubernetes API source behind the
 * agent's ConfigSource interface, and the Events it writes back. The list+watch
 * machinery is KubernetesApiSource (src/agent/sources/api-source.ts); this file
 * only adapts its callbacks and status to what the agent reads.
 */
import { type ResourceEvent, type DesiredEvent, type EventSink, secretNamespace } from '../../kubernetes/index.js';
import { KubernetesApiSource, type ApiSourceOptions, type ApiSourceStatus } from './api-source.js';
import { loadKubeConfig, type KubeClient } from './kube-client.js';
import { ApiEventRecorder } from './event-recorder.js';
import type { ConfigSource, SourceStatus } from './index.js';
import { namesIn, SecretWatch } from './secret-watch.js';

export type KubernetesSourceOptions = Pick<ApiSourceOptions, 'backoff' | 'calicoApi' | 'watchTimeoutSeconds' | 'watchIdleMs' | 'watchdogIntervalMs'>;

export interface KubernetesSource extends ConfigSource {
  /** The UID of a known object, so Events are attached to it (`kubectl describe` looks them up by UID). */
  uidOf(kind: 'Service' | 'Node', name: string, namespace?: string): string | undefined;
}

function toSourceStatus(s: ApiSourceStatus): SourceStatus {
  return {
    kind: 'kubernetes',
    paths: [],
    server: s.server ?? null,
    calicoApi: s.calicoApi ?? null,
    connected: s.connected,
    synced: s.synced,
    since: new Date(s.since),
    lastSyncAt: s.lastSyncAt === undefined ? null : new Date(s.lastSyncAt),
    lastError: s.lastError ?? null,
    watchRestarts: Object.values(s.watchRestarts).reduce((a, b) => a + b, 0),
    failedRequests: s.failures,
  };
}

export function kubernetesSource(client: KubeClient, opts: KubernetesSourceOptions = {}): KubernetesSource {
  let api: KubernetesApiSource | undefined;
  let secrets: SecretWatch | undefined;
  let closed = false;
  const status = (): SourceStatus =>
    api
      ? toSourceStatus(api.status())
      : {
          kind: 'kubernetes',
          paths: [],
          server: client.server,
          calicoApi: null,
          connected: false,
          synced: false,
          since: new Date(),
          lastSyncAt: null,
          lastError: null,
          watchRestarts: 0,
        };
  return {
    async start(sink) {
      // While the API server stays unreachable every retry fails the same way:
      // pass each resource's error on once, until it changes or the source reconnects.
      const reported = new Map<string, string>();
      // Watch events come one per line, many lines to a chunk: the events of
      // one turn of the event loop go to the agent as one batch, planned and
      // reconciled once (a burst of 2,000 objects is not 2,000 reconciles).
      let batch: ResourceEvent[] | undefined;
      // Nothing goes out before the first sync of the API and of the password Secrets.
      let ready = false;
      const flush = () => {
        if (!batch || !ready) return;
        const events = batch;
        batch = undefined;
        // The API source reports only new issues; the agent wants the current list.
        if (!closed) sink.onChange(events, api!.issues());
      };
      const push = (events: ResourceEvent[]) => {
        if (!batch) {
          batch = [];
          setImmediate(flush);
        }
        // a relist can be 100,000s of events: no spread into push's arguments
        for (const e of events) batch.push(e);
      };
      // Secrets the passwords name, one watch per name in tsbgp's namespace (docs/transport-security.md).
      const ns = secretNamespace();
      const sw = (secrets = new SecretWatch({
        client,
        namespace: ns,
        watchIdleMs: opts.watchIdleMs,
        watchdogIntervalMs: opts.watchdogIntervalMs,
        onChange: push,
        onError: (e, name) => sink.onError?.(new Error(`Secret ${ns}/${name}: ${e.message}`)),
      }));
      const refs = new Map<string, string[]>();
      const noteRefs = (events: readonly ResourceEvent[]) => {
        let touched = false;
        for (const e of events) {
          const kind = e.type === 'delete' ? e.kind : e.resource.kind;
          if (kind !== 'BGPPeer' && kind !== 'BGPConfiguration') continue;
          touched = true;
          if (e.type === 'delete') refs.delete(`${kind}/${e.name}`);
          else refs.set(`${kind}/${e.resource.name}`, namesIn([e.resource]));
        }
        if (touched) sw.setNames([...refs.values()].flat());
      };
      api = new KubernetesApiSource({
        ...opts,
        client,
        onChange: (events) => {
          noteRefs(events);
          push(events);
        },
        onConnectionChange: (connected) => {
          if (connected) reported.clear();
          sink.onConnectionChange?.(connected, status());
        },
        onWatchRestart: (resource) => sink.onWatchRestart?.(resource),
        onError: (e, resource) => {
          const text = resource ? `${resource}: ${e.message}` : e.message;
          if (reported.get(resource ?? '') === text) return;
          reported.set(resource ?? '', text);
          sink.onError?.(new Error(text));
        },
      });
      api.start();
      await api.synced();
      await sw.settled();
      ready = true;
      // the whole first list is in the agent's hands when start() returns
      flush();
    },
    status,
    settle: async () => undefined,
    close: async () => {
      closed = true;
      secrets?.close();
      await api?.close();
    },
    uidOf: (kind, name, namespace) => api?.uidOf(kind, name, namespace),
  };
}

/**
 * Events through the API, attached to the objects' UIDs (a Node's events fall
 * back to its name as UID, as the kubelet's do, which `kubectl describe node` also finds).
 */
export function kubernetesEvents(
  client: KubeClient,
  source: Pick<KubernetesSource, 'uidOf'>,
  opts: { host: string; intervalMs?: number; now?: () => number; onError?: (e: Error) => void },
): EventSink {
  const recorder = new ApiEventRecorder({ client, host: opts.host, intervalMs: opts.intervalMs, now: opts.now, onError: opts.onError });
  const withUid = (e: DesiredEvent): DesiredEvent => {
    const uid = source.uidOf(e.involved.kind, e.involved.name, e.involved.namespace) ?? (e.involved.kind === 'Node' ? e.involved.name : undefined);
    return uid ? { ...e, involved: { ...e.involved, uid } } : e;
  };
  return {
    record: (events) => recorder.record(events.map(withUid)),
    flush: () => recorder.flush(),
  };
}

/** The API client for `--kubeconfig`/`--in-cluster`; an error names the flag and what failed. */
export function kubeConfigFor(
  source: { readonly kind: 'kubeconfig'; readonly path: string } | { readonly kind: 'in-cluster' },
  env: NodeJS.ProcessEnv,
): KubeClient {
  const flag = source.kind === 'kubeconfig' ? `--kubeconfig ${source.path}` : '--in-cluster';
  try {
    return source.kind === 'kubeconfig' ? loadKubeConfig({ kubeconfig: source.path, env }) : loadKubeConfig({ env });
  } catch (e) {
    throw new Error(`${flag}: ${(e as Error).message}`);
  }
}
