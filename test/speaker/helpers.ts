import { BgpSpeaker, type PeerOptions, type PeerStatus, type SpeakerOptions, type SpeakerScheduler } from '../../src/index.js';

/** Speakers started by a test, stopped in afterEach. */
export const running: BgpSpeaker[] = [];

export async function stopAll(): Promise<void> {
  await Promise.all(running.splice(0).map((s) => s.stop()));
}

/** A speaker listening on `address` with a free port. */
export async function speaker(address: string, opts: Partial<SpeakerOptions> & { asn: number }): Promise<BgpSpeaker & { address: string }> {
  const s = new BgpSpeaker({ routerId: address, listen: { addresses: [address], port: 0 }, coalesceMs: 2, maxDelayMs: 20, ...opts }) as BgpSpeaker & {
    address: string;
  };
  s.address = address;
  await s.start();
  running.push(s);
  return s;
}

/** Quick timers so tests do not wait for defaults. */
export const FAST: Partial<PeerOptions> = { connectRetryTime: 1, idleHoldTime: 1, holdTime: 9 };

/** Configures a and b as each other's peer (a dials, b dials: the session layer settles the collision). */
export function link(
  a: BgpSpeaker & { address: string },
  b: BgpSpeaker & { address: string },
  aSide: Partial<PeerOptions> = {},
  bSide: Partial<PeerOptions> = {},
): void {
  a.addPeer({ ...FAST, address: b.address, port: b.port, asn: b.options.asn, localAddress: a.address, ...aSide } as PeerOptions);
  b.addPeer({ ...FAST, address: a.address, port: a.port, asn: a.options.asn, localAddress: b.address, ...bSide } as PeerOptions);
}

export async function eventually<T>(what: string, fn: () => T | undefined | false, timeoutMs = 8000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function peerStatus(s: BgpSpeaker, address: string): PeerStatus {
  const st = s.status().find((p) => p.address === address);
  if (!st) throw new Error(`no peer ${address}`);
  return st;
}

export async function established(s: BgpSpeaker, address: string): Promise<PeerStatus> {
  return eventually(`${address} Established`, () => {
    const st = peerStatus(s, address);
    return st.state === 'Established' ? st : undefined;
  });
}

export function routeOf(s: BgpSpeaker, prefix: string, peer?: string) {
  return s.received(peer).find((r) => r.prefix.toString() === prefix);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Timers fire only when the test advances the clock. */
export class VirtualClock implements SpeakerScheduler {
  t = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private next = 1;
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = this.next++;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  };
  clearTimeout = (h: unknown) => {
    this.timers.delete(h as number);
  };
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers].filter(([, x]) => x.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = Math.max(this.t, due[1].at);
      due[1].fn();
    }
    this.t = end;
  }
  get pending(): number {
    return this.timers.size;
  }
}
