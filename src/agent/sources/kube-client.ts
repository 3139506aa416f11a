/**
 * Shell: the agent's Kubernetes API client, on Node's own `https`, and its
 * one door: the rest of the agent imports from here. It does what the agent
 * needs and nothing else, in three files:
 *
 * - kube-config.ts: a kubeconfig or the in-cluster service account → a `KubeConnection`;
 * - kube-http.ts: `KubeClient`, JSON requests, paginated lists and watches, with
 *   client-go's handling of 401, `Retry-After` and rotated certificates;
 * - list-watch.ts: `ListWatch`, the list-and-watch loop as client-go's reflector runs it.
 *
 * It replaces `@kubernetes/client-node`, whose import alone cost the agent
 * ~70 MB of RSS (its generated API and dependencies; bench/kube-client-import.ts,
 * docs/agent-memory.md); these files and js-yaml cost a few MB.
 */
import { readFileSync } from 'node:fs';
import { inClusterConnection, parseKubeconfig } from './kube-config.js';
import { KubeClient, type KubeClientOptions } from './kube-http.js';

export { inClusterConnection, parseKubeconfig, runExecPlugin, type ExecPlugin, type KubeConnection, type TlsFiles } from './kube-config.js';
export {
  ApiError,
  isExpired,
  isTooLargeResourceVersion,
  KubeClient,
  LineSplitter,
  retryAfterMs,
  type KubeClientOptions,
  type ListResult,
  type WatchEvent,
} from './kube-http.js';
export { ListWatch, type ListWatchOptions } from './list-watch.js';

/** `--kubeconfig PATH` when given, else the in-cluster service account (KUBERNETES_SERVICE_HOST/PORT). */
export function loadKubeConfig(opts: {
  readonly kubeconfig?: string;
  /** Prefix of /var/run/secrets/kubernetes.io/serviceaccount (tests). */
  readonly serviceAccountRoot?: string;
  /** Where KUBERNETES_SERVICE_HOST/PORT are read (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
  /** The client's clock, sleep and limits (tests). */
  readonly client?: KubeClientOptions;
}): KubeClient {
  if (opts.kubeconfig) return new KubeClient(parseKubeconfig(readFileSync(opts.kubeconfig, 'utf8'), opts.kubeconfig), opts.client);
  return new KubeClient(inClusterConnection(opts.env ?? process.env, opts.serviceAccountRoot), opts.client);
}
