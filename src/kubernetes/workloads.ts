/**
 * Local workload peering (pure): the node peering with BGP-speaking pods on
 * it, as Calico does it.
 *
 * Felix matches each BGPPeer's `localWorkloadSelector` against the workloads
 * on its node and writes one endpoint-status file per workload (JSON, under
 * `<EndpointStatusPathPrefix>/endpoint-status/`, default
 * `/var/run/calico/endpoint-status/`): the host-side interface, the
 * workload's IPv4 and IPv6 networks, and `bgpPeerName`, set when a BGPPeer
 * selected it. confd turns each file that names a BGPPeer into one peering
 * per family, to the family's first address, in the BGPPeer's `asNumber`,
 * with its `localASNumber` and `filters`, passive, without a source address,
 * TTL security or password. A shell (src/agent/sources/workload-status.ts)
 * reads the files; this module decodes one and plans the peerings.
 */
import { Address } from '../net/index.js';

/** One endpoint-status file, decoded. Nets keep their text (`192.0.2.7/32`); `peerAddress` picks the address. */
export interface LocalWorkloadEndpoint {
  /** The file's name inside the endpoint-status directory (Felix names it after the endpoint). */
  readonly file: string;
  readonly ifaceName?: string;
  readonly mac?: string;
  readonly ipv4Nets: readonly string[];
  readonly ipv6Nets: readonly string[];
  /** The BGPPeer whose localWorkloadSelector chose this workload (Felix decides); absent: no peering. */
  readonly bgpPeerName?: string;
}

/** A status file that cannot be read as one: `field` names the part (absent: the whole file). */
export class EndpointStatusError extends Error {
  constructor(
    readonly file: string,
    readonly field: string | undefined,
    /** What is wrong, without the file and field. */
    readonly detail: string,
  ) {
    super(`${file}: ${field ? `${field}: ` : ''}${detail}`);
    this.name = 'EndpointStatusError';
  }
}

/** `ip/len` of the given family; the address keeps its host bits (a workload's /32 or /128, as Felix writes). */
function netAddress(text: unknown, family: 4 | 6, file: string, field: string): Address {
  if (typeof text !== 'string') throw new EndpointStatusError(file, field, `expected "ip/length", got ${text === null ? 'null' : typeof text}`);
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text);
  if (!m) throw new EndpointStatusError(file, field, `expected "ip/length", got ${JSON.stringify(text)}`);
  let a: Address;
  try {
    a = Address.parse(m[1]);
  } catch (e) {
    throw new EndpointStatusError(file, field, (e as Error).message);
  }
  if (a.family !== family) throw new EndpointStatusError(file, field, `${text} is not an IPv${family} network`);
  if (Number(m[2]) > (family === 4 ? 32 : 128)) throw new EndpointStatusError(file, field, `prefix length ${m[2]} is longer than ${family === 4 ? 32 : 128}`);
  return a;
}

function optString(o: Record<string, unknown>, key: string, file: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new EndpointStatusError(file, key, `expected a string, got ${typeof v}`);
  return v;
}

function nets(o: Record<string, unknown>, key: 'ipv4Nets' | 'ipv6Nets', family: 4 | 6, file: string): string[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new EndpointStatusError(file, key, `expected a list of "ip/length", got ${typeof v}`);
  v.forEach((n, i) => netAddress(n, family, file, `${key}[${i}]`));
  return v as string[];
}

/**
 * Decodes one endpoint-status file as Felix writes it (libcalico-go
 * epstatusfile's WorkloadEndpointStatus: `ifaceName`, `mac`, `ipv4Nets`,
 * `ipv6Nets`, `bgpPeerName`; other keys are ignored). Throws
 * EndpointStatusError naming the file and field: an empty or half-written
 * file (Felix writes in place) reads as invalid JSON.
 */
export function parseEndpointStatus(file: string, text: string): LocalWorkloadEndpoint {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch (e) {
    throw new EndpointStatusError(file, undefined, text.trim() === '' ? 'empty (being written?)' : `not JSON: ${(e as Error).message}`);
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o))
    throw new EndpointStatusError(file, undefined, `expected a JSON object, got ${Array.isArray(o) ? 'a list' : o === null ? 'null' : typeof o}`);
  const r = o as Record<string, unknown>;
  const ifaceName = optString(r, 'ifaceName', file);
  const mac = optString(r, 'mac', file);
  const bgpPeerName = optString(r, 'bgpPeerName', file);
  return {
    file,
    ...(ifaceName !== undefined ? { ifaceName } : {}),
    ...(mac !== undefined ? { mac } : {}),
    ipv4Nets: nets(r, 'ipv4Nets', 4, file),
    ipv6Nets: nets(r, 'ipv6Nets', 6, file),
    ...(bgpPeerName !== undefined ? { bgpPeerName } : {}),
  };
}

/** The workload's address to peer with in a family: the first of its nets, as confd takes it; undefined when it has none. */
export function peerAddress(w: LocalWorkloadEndpoint, family: 4 | 6): Address | undefined {
  const first = (family === 4 ? w.ipv4Nets : w.ipv6Nets)[0];
  return first === undefined ? undefined : netAddress(first, family, w.file, family === 4 ? 'ipv4Nets[0]' : 'ipv6Nets[0]');
}

/** The workloads a BGPPeer chose on this node (Felix named it in their files), by file name. */
export function workloadsOf(workloads: ReadonlyMap<string, LocalWorkloadEndpoint>, bgpPeer: string): LocalWorkloadEndpoint[] {
  return [...workloads.values()].filter((w) => w.bgpPeerName === bgpPeer).sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}
