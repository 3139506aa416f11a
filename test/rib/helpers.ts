import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import type { CodecContext } from '../../src/wire/context.js';
import type { PathAttributes, UpdateMessage } from '../../src/wire/types.js';
import type { PackOptions, Packer } from '../../src/rib/ports.js';

export const CTX: CodecContext = { asn4: true, extendedMessage: false, addPathV4: false, addPathV6: false };

export const A = (s: string): Address => Address.parse(s);
export const P = (s: string): Prefix => Prefix.parse(s);

/** Deterministic stand-in for the packer: `perMessage` prefixes per UPDATE, bytes = a readable description. */
export class FakePacker implements Packer {
  updateCalls = 0;
  withdrawCalls = 0;
  messages = 0;
  readonly log: { kind: 'announce' | 'withdraw'; attrs?: PathAttributes; prefixes: string[] }[] = [];

  constructor(readonly perMessage = 100) {}

  packUpdates(attrs: PathAttributes, prefixes: readonly Prefix[], _ctx: CodecContext, opts?: PackOptions): Uint8Array[] {
    this.updateCalls++;
    this.log.push({ kind: 'announce', attrs, prefixes: prefixes.map(String) });
    return this.chunk(prefixes, (ps) => `A ${describe(attrs)} nh6=${opts?.nextHopV6?.map(String).join(',') ?? '-'} ${ps.join(' ')}`);
  }

  packWithdrawals(prefixes: readonly Prefix[]): Uint8Array[] {
    this.withdrawCalls++;
    this.log.push({ kind: 'withdraw', prefixes: prefixes.map(String) });
    return this.chunk(prefixes, (ps) => `W ${ps.join(' ')}`);
  }

  private chunk(prefixes: readonly Prefix[], text: (ps: string[]) => string): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (let i = 0; i < prefixes.length; i += this.perMessage) {
      out.push(new TextEncoder().encode(text(prefixes.slice(i, i + this.perMessage).map(String))));
      this.messages++;
    }
    return out;
  }
}

export function describe(a: PathAttributes): string {
  return JSON.stringify(a, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
}

export function decodeFake(m: Uint8Array): string {
  return new TextDecoder().decode(m);
}

export function update(attrs: PathAttributes, nlri: string[], withdrawn: string[] = []): UpdateMessage {
  return { type: 'update', withdrawn: withdrawn.map(P), attributes: attrs, nlri: nlri.map(P) };
}

export function ebgpAttrs(asPath: number[], nextHop: string, extra: Partial<PathAttributes> = {}): PathAttributes {
  return { origin: 0, asPath: [{ type: 2, asns: asPath }], nextHop: A(nextHop), ...extra };
}
