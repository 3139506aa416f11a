/**
 * The interface a BGP session runs over (pure): the one holding the
 * session's local address, with the network connected there. Routes a peer
 * sends with a next hop on that network go out of that interface, which is
 * what an export or import policy's `interface` condition matches (BIRD's
 * `ifname` for a BGP route). The speaker reads the table of interfaces
 * (`os.networkInterfaces()`) when a session comes up.
 */
import { Address, Prefix } from '../net/index.js';
import type { SessionLink } from '../rib/index.js';

/** One address of an interface, as `os.networkInterfaces()` gives it. */
export interface InterfaceAddress {
  readonly address: string;
  readonly cidr: string | null;
}

/** The interface holding `localAddress` and its connected network; undefined when none does (or the address is not one). */
export function sessionLink(localAddress: string, interfaces: Readonly<Record<string, readonly InterfaceAddress[] | undefined>>): SessionLink | undefined {
  const [text, scope] = localAddress.split('%');
  let local: Address;
  try {
    local = Address.parse(text.startsWith('::ffff:') && text.includes('.') ? text.slice(7) : text);
  } catch {
    return undefined;
  }
  // The interface holding the address itself; else the one whose network holds it, the longest (127.0.0.x on lo's 127.0.0.1/8).
  let within: SessionLink | undefined;
  for (const [iface, addrs] of Object.entries(interfaces)) {
    if (scope !== undefined && scope !== iface) continue;
    for (const a of addrs ?? []) {
      if (a.cidr === null) continue;
      let addr: Address;
      try {
        addr = Address.parse(a.address.split('%')[0]);
      } catch {
        continue;
      }
      if (addr.family !== local.family) continue;
      const length = Number(a.cidr.slice(a.cidr.lastIndexOf('/') + 1));
      if (!Number.isInteger(length) || length < 0 || length > (addr.family === 4 ? 32 : 128)) continue;
      const network = Prefix.containing(addr, length);
      if (addr.equals(local)) return { iface, network };
      if (network.contains(local) && (within === undefined || network.length > within.network.length)) within = { iface, network };
    }
  }
  return within;
}
