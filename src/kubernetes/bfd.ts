/**
 * Calico Enterprise's `failureDetectionMode: BFDIfDirectlyConnected`, decided
 * from cluster state alone (pure): a peer is directly connected when its
 * address lies in the node's own subnet, the prefix of the node's Calico
 * address annotation (projectcalico.org/IPv4Address "192.0.2.10/24", or the
 * IPv6 one), which calico-node writes with the interface's prefix length.
 * A node address without a prefix length (a bare address, or only the
 * Kubernetes InternalIP) makes no peer directly connected: no BFD, and a
 * plan error says why. A peer outside the subnet simply gets none (that is
 * what "if directly connected" means).
 */
import { type Address, Prefix } from '../net/index.js';
import type { PlannedPeer } from './plan-types.js';
import type { BGPPeer, Node } from './resources.js';

export type PlannedBfd = NonNullable<PlannedPeer['bfd']>;

/** The BFD settings for a peering of BGPPeer `p` from node `self` to `remote`, or why there are none. */
export function bfdFor(p: BGPPeer, self: Node, remote: Address): { bfd?: PlannedBfd; problem?: string } {
  if (p.failureDetectionMode !== 'BFDIfDirectlyConnected') return {};
  const own = remote.family === 4 ? self.ipv4Address : self.ipv6Address;
  if (own?.length === undefined) {
    return {
      problem:
        `BFDIfDirectlyConnected: node ${self.name} has no IPv${remote.family} address with a prefix length ` +
        `(projectcalico.org/IPv${remote.family}Address), so no peer counts as directly connected`,
    };
  }
  const subnet = Prefix.containing(own.address, own.length);
  if (!subnet.contains(remote)) return {};
  return { bfd: { minRx: p.bfd.receiveInterval, minTx: p.bfd.transmitInterval, multiplier: p.bfd.detectMultiplier, passive: p.bfd.passiveMode } };
}
