/** `tsbgp help COMMAND`, `tsbgp COMMAND --help` / `-h`: one command's usage, flags and an example. */

/** Where the control socket is by default for whoever runs the command: filled in by `commandHelp`. */
const CONTROL_HERE = '{control}';
const CONTROL = `  --control SOCKET   the agent's control socket (default $TSBGP_CONTROL; else /run/tsbgp/tsbgp.sock
                     as root, $XDG_RUNTIME_DIR/tsbgp.sock or $TMPDIR/tsbgp-UID/tsbgp.sock
                     for other users; for you now: ${CONTROL_HERE})`;
const JSON_FLAG = `  --json             print JSON, a stable contract (docs/json-output.md)`;

export const COMMAND_HELP: Readonly<Record<string, string>> = {
  agent: `usage: tsbgp agent [--node NAME] (--manifests PATH... | --kubeconfig PATH | --in-cluster) [options]

Runs the node agent: reads the configuration, plans what this node
advertises with Calico's semantics, and keeps the BGP sessions in step.

source (exactly one):
  --manifests PATH   manifest files or folders (repeatable; each is a layer, later ones win;
                     extra paths after the options are further layers); watched for changes
  --kubeconfig PATH  the Kubernetes API through a kubeconfig (its current context)
  --in-cluster       the Kubernetes API with the pod's service account (in a DaemonSet)

options:
  --node NAME        the node this agent speaks for (default $NODENAME, then $CALICO_K8S_NODE_REF)
${CONTROL}
  --log-level LEVEL  trace, debug, info, warning, error, fatal (overrides logSeverityScreen)
  --listen-port N    BGP listen port (overrides the BGPConfiguration's listenPort, default 179);
                     ports below 1024 need root or CAP_NET_BIND_SERVICE
  --metrics ADDR:PORT  Prometheus /metrics, /healthz, /readyz (docs/metrics.md), e.g. 0.0.0.0:9900
  --max-prefixes LIMIT[,ACTION[,WARN%]]
                     per peer and family (default 20000,block,80; 0 for none): docs/limits.md
  --kernel on|off    program learned routes into the kernel as BIRD does, and learn
                     its other routes (borrowed pod IPs) (default off): src/kernel/README.md
  --kernel-table T   with --kernel on: the routing table (default main)
  --kernel-protocol N  with --kernel on: the routes' protocol (default 12, bird)
  --kernel-metric N  with --kernel on: the routes' metric (default the kernel's)
  --kernel-writer netlink|iproute2
                     with --kernel on: how routes are written: netlink (default; rtnetlink from
                     the agent, ip -batch when the agent cannot) or iproute2 (always ip -batch)
  --endpoint-status-dir DIR|none
                     Felix's workload endpoint-status files, for local workload peering (BGPPeers
                     with localWorkloadSelector); default $CALICO_ENDPOINT_STATUS_PATH_PREFIX/
                     endpoint-status, else /var/run/calico/endpoint-status; none: not read
  --drain-time SECONDS  on SIGTERM, re-advertise every route with GRACEFUL_SHUTDOWN (RFC 8326)
                     and keep the sessions up this long before closing them (default 30; 0: no
                     drain, stop with graceful restart); a second SIGTERM, or SIGINT, stops at once
  --drain-on-cordon  drain and hold while this node is cordoned (per node: the Node annotation
                     tsbgp.io/drain-on-cordon "true" or "false" overrides): docs/upgrades.md
  --drain-close hard-reset|keep-stale
                     how sessions close after a SIGTERM drain: hard-reset (default; Cease /
                     Administrative Shutdown, peers drop the routes) or keep-stale (Cease /
                     Administrative Reset, peers keep them stale under graceful restart, still
                     marked GRACEFUL_SHUTDOWN): docs/drain-lab.md

example (no root: a high port and a control socket in /tmp):
  tsbgp agent --node worker1 --manifests examples/yaobank/base --listen-port 1179 --control /tmp/tsbgp.sock
`,
  status: `usage: tsbgp status [PEER] [--json] [--control SOCKET]

Without PEER: the BGP sessions as \`calicoctl node status\` shows them (SINCE is
the last up/down change; INFO says why a session is down), the configuration
source, configuration errors and warnings, and refused advertisements.
With PEER (an address or a BGPPeer id): that peer in full, like
\`birdc show protocols all\`: uptime, hold time, capabilities, prefixes
received/accepted/advertised, messages, last error.

options:
${JSON_FLAG}
${CONTROL}
`,
  routes: `usage: tsbgp routes [--peer IP | --received IP | --kernel] [--json] [--control SOCKET]

What is advertised to each peer (or to --peer IP only), and which resource caused it.
--received IP: what that peer sends us, like \`birdc show route protocol X\`: every
route as received (before import policy) and whether import accepted it.
--kernel: the kernel side (agent run with --kernel on), like \`birdc show route
export kernel1\`: each prefix installed (metric, next hops), refused and why,
pending, or adopted and kept until the restart ends.

options:
  --peer IP          one peer's advertisements
  --received IP      the routes a peer sent us, before and after import policy
  --kernel           each route of the kernel side, installed or refused with the reason
${JSON_FLAG}
${CONTROL}
`,
  explain: `usage: tsbgp explain PREFIX|NAMESPACE/SERVICE [--json] [--control SOCKET]

Why a prefix, or each IP of a Service, is (or is not) advertised to each peer:
the planner's reasons, the allow-list entry that admits it (or that none does),
the built-in export rule, each peer's BGPFilters and the session's state.
Exits 1 when the Service does not exist.

options:
${JSON_FLAG}
${CONTROL}

example:
  tsbgp explain 198.18.0.0/16
  tsbgp explain yaobank/customer
`,
  drain: `usage: tsbgp drain [--cancel] [--json] [--control SOCKET]

Moves traffic off this node without closing a session (RFC 8326 graceful
shutdown): the agent re-advertises every route with the GRACEFUL_SHUTDOWN
community (65535:0), and with LOCAL_PREF 0 to iBGP peers, so routers prefer
the other nodes. The drain holds, sessions up, until --cancel; a SIGTERM then
closes the sessions once the agent's drain time has passed.
Prints the drain in force.

options:
  --cancel           end the drain: routes re-advertised without the community
${JSON_FLAG}
${CONTROL}
`,
  plan: `usage: tsbgp plan --node NAME --manifests PATH... [--listen-port N] [--max-prefixes L[,A[,W%]]]
                  [--endpoint-status-dir DIR] [--strict] [--json]

Offline, without sessions: what the agent would advertise from NODE, to which
peers, and every configuration error and warning. Exits 1 when the plan has
errors, and with --strict when it has warnings too (a misspelt field, a field
tsbgp ignores): for CI checks of manifests.

options:
  --node NAME        the node to plan for
  --manifests PATH   manifest files or folders (repeatable; later layers win)
  --listen-port N    as the agent's flag
  --max-prefixes L[,A[,W%]]  as the agent's flag (shown per peer; a BGPPeer's
                     tsbgp.io/max-prefixes annotation overrides it)
  --endpoint-status-dir DIR  the node's workload endpoint-status files (a copy of Felix's
                     directory), for its local workload peers; default none
  --strict           warnings fail the plan too (exit 1), each printed to stderr
${JSON_FLAG}

example:
  tsbgp plan --node worker1 --manifests examples/yaobank/base
`,
  version: `usage: tsbgp version

Prints the version.
`,
  help: `usage: tsbgp help [COMMAND]

The list of commands, or one command's usage.
`,
};

/** `--help`/`-h` anywhere in a command's arguments asks for its help. */
/** One command's help, with the control socket's default as it is for this user (`defaultControlPath`). */
export function commandHelp(cmd: string, controlDefault: string): string | undefined {
  return COMMAND_HELP[cmd]?.replaceAll(CONTROL_HERE, controlDefault);
}

export function wantsHelp(args: readonly string[]): boolean {
  return args.includes('--help') || args.includes('-h');
}

/** A hint for a listen error of the BGP port: EACCES below 1024 without the capability, EADDRINUSE (another BGP daemon). */
export function listenHint(err: Error & { code?: string; port?: number }): string {
  const parsed = err.port ?? Number(/:(\d+)$/.exec(err.message)?.[1] ?? NaN);
  const port = Number.isFinite(parsed) ? parsed : 179;
  if (err.code === 'EACCES') {
    return (
      `: port ${port} needs root or CAP_NET_BIND_SERVICE (setcap cap_net_bind_service=+ep "$(command -v node)"), ` +
      'or pick a port above 1023 with --listen-port (e.g. --listen-port 1179; the peers must then dial that port)'
    );
  }
  if (err.code === 'EADDRINUSE') {
    return `: another BGP daemon (BIRD of calico-node?) or tsbgp agent already listens on port ${port}; stop it, or use --listen-port`;
  }
  return '';
}
