/**
 * The agent's max-prefix limit for its BGP peers (`--max-prefixes`), and
 * its default. A node needs a few thousand routes (pod blocks of the other
 * nodes, mesh routes, what a local speaker injects); a router that leaks a
 * full table to every node must not take every node down with it, nor make
 * every node tear its session down (every Service would vanish from the
 * network at once). So the default is `block`: past the limit, new routes
 * from that peer are refused and reported (log, status, metrics) while the
 * session and the node's own advertisements stay up.
 */
import { perFamily } from '../kubernetes/index.js';
import { parseMaxPrefixSpec, type MaxPrefixLimit, type PeerOptions } from '../speaker/index.js';

/** Routes per family and peer before the agent refuses more. */
const DEFAULT_MAX_PREFIXES = 20_000;
const DEFAULT_MAX_PREFIX_ACTION: NonNullable<MaxPrefixLimit['action']> = 'block';

export type AgentMaxPrefixes = PeerOptions['maxPrefixes'];

/** The default: DEFAULT_MAX_PREFIXES per family, action block, warning at 80 %. */
export function defaultMaxPrefixes(): AgentMaxPrefixes {
  const l: MaxPrefixLimit = { limit: DEFAULT_MAX_PREFIXES, action: DEFAULT_MAX_PREFIX_ACTION, warningThreshold: 80 };
  return { ipv4: l, ipv6: l };
}

/**
 * `--max-prefixes LIMIT[,ACTION[,WARN%]]`: LIMIT routes per family and peer
 * (0: no limit), ACTION block (default), warn or restart, WARN% the warning
 * threshold (default 80). Throws naming the flag and what is wrong. The same
 * text on a BGPPeer's `tsbgp.io/max-prefixes` annotation sets that peer's.
 */
export function parseMaxPrefixes(text: string): AgentMaxPrefixes {
  let l: MaxPrefixLimit | null;
  try {
    l = parseMaxPrefixSpec(text);
  } catch (e) {
    throw new Error(`--max-prefixes: ${(e as Error).message}`);
  }
  return perFamily(l);
}
