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
import type { MaxPrefixLimit, PeerOptions } from '../speaker/types.js';

/** Routes per family and peer before the agent refuses more. */
export const DEFAULT_MAX_PREFIXES = 20_000;
export const DEFAULT_MAX_PREFIX_ACTION: NonNullable<MaxPrefixLimit['action']> = 'block';

export type AgentMaxPrefixes = PeerOptions['maxPrefixes'];

/** The default: DEFAULT_MAX_PREFIXES per family, action block, warning at 80 %. */
export function defaultMaxPrefixes(): AgentMaxPrefixes {
  const l: MaxPrefixLimit = { limit: DEFAULT_MAX_PREFIXES, action: DEFAULT_MAX_PREFIX_ACTION, warningThreshold: 80 };
  return { ipv4: l, ipv6: l };
}

/**
 * `--max-prefixes LIMIT[,ACTION[,WARN%]]`: LIMIT routes per family and peer
 * (0: no limit), ACTION block (default), warn or restart, WARN% the warning
 * threshold (default 80). Throws naming the flag and what is wrong.
 */
export function parseMaxPrefixes(text: string): AgentMaxPrefixes {
  const fail = (why: string): never => {
    throw new Error(`--max-prefixes: expected LIMIT[,ACTION[,WARN%]] (e.g. 20000 or 50000,restart or 20000,block,90), got ${JSON.stringify(text)}: ${why}`);
  };
  const [limitText, actionText, warnText, ...rest] = text.split(',').map((s) => s.trim());
  if (rest.length > 0) fail('too many parts');
  if (!/^\d+$/.test(limitText ?? '')) fail(`LIMIT ${JSON.stringify(limitText)} is not a whole number`);
  const limit = Number(limitText);
  if (limit === 0) return undefined;
  if (limit > 0x7fffffff) fail(`LIMIT must be at most ${0x7fffffff}`);
  const action = (actionText === undefined || actionText === '' ? DEFAULT_MAX_PREFIX_ACTION : actionText) as MaxPrefixLimit['action'];
  if (!['block', 'warn', 'restart'].includes(action!)) fail(`ACTION ${JSON.stringify(actionText)} is not block, warn or restart`);
  let warningThreshold = 80;
  if (warnText !== undefined) {
    const w = warnText.replace(/%$/, '');
    if (!/^\d+$/.test(w) || Number(w) < 1 || Number(w) > 100) fail(`WARN% ${JSON.stringify(warnText)} is not a percentage 1-100`);
    warningThreshold = Number(w);
  }
  const l: MaxPrefixLimit = { limit, action, warningThreshold };
  return { ipv4: l, ipv6: l };
}
