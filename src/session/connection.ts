import type { Socket } from 'node:net';
import {
  MAX_EXTENDED_MESSAGE,
  MAX_MESSAGE,
  LEGACY_CONTEXT,
  type CodecContext,
  BgpError,
  Framer,
  decodeMessage,
  encodeMessage,
  type Message,
  type MessageKind,
  Notify,
} from '../wire/index.js';

export interface Codec {
  decode(type: number, body: Uint8Array, ctx: CodecContext): Message;
  encode(msg: Message, ctx: CodecContext): Uint8Array;
}

export const WIRE_CODEC: Codec = { decode: decodeMessage, encode: encodeMessage };

export interface ConnectionHandlers {
  onMessage(msg: Message): void;
  /** A decode failure. The NOTIFICATION has been sent and the connection is closing. */
  onError(err: BgpError): void;
  onClose(): void;
  /** The send queue emptied after backpressure; a good moment to build more UPDATEs. */
  onDrain?(): void;
  /** The socket stopped taking bytes: what follows waits in our queue (see `progress`). */
  onBlocked?(): void;
}

/** Message counts a connection adds to (one object may be shared by every connection of a peer). */
export interface MessageStats {
  messagesIn: number;
  messagesOut: number;
  updatesIn: number;
  updatesOut: number;
}

export interface ConnectionOptions {
  codec?: Codec;
  stats?: MessageStats;
  /** TCP keepalive probe delay, ms (0 disables). */
  tcpKeepAliveMs?: number;
  /** How long `close()` waits for queued bytes before destroying the socket, ms. */
  lingerMs?: number;
  /**
   * Longest stretch of received messages handled in one turn of the event
   * loop, ms (default 5). Past it, the rest waits for the next turn
   * (`setImmediate`) with the socket paused, so a peer sending a full table
   * never holds the loop (timers, health probes, other sessions) for long,
   * and TCP back-pressure holds the peer meanwhile.
   */
  sliceMs?: number;
}

/** Default of `ConnectionOptions.sliceMs`. */
const DEFAULT_SLICE_MS = 5;

/** Whole UPDATEs back to back in one buffer: one socket write (one TCP segment, one read at the peer) for `count` messages. */
export interface UpdateRun {
  readonly bytes: Uint8Array;
  readonly count: number;
}

/** Longest run `joinUpdates` builds, bytes (a message longer than this goes alone). */
export const RUN_BYTES = 65_536;

/**
 * Joins consecutive UPDATEs into runs of at most `RUN_BYTES`, so that a
 * flush costs one socket write per peer rather than one per message (a
 * reflector sending 50 small UPDATEs to 997 clients: 997 writes, not 49,850).
 * Messages already adjacent in one buffer (the packer writes a batch back to
 * back, `PackArena`) become one run by a view, without copying. Others are
 * copied into a run when `shared` (the same messages go to several peers:
 * joined once for all of them) or when the whole batch fits in one run; a
 * batch larger than that for one peer (a session's initial dump) is not
 * copied, so that no peer gets a private copy of a large table.
 */
export function joinUpdates(messages: readonly Uint8Array[], shared: boolean): UpdateRun[] {
  if (messages.length === 1) return [{ bytes: messages[0], count: 1 }];
  let copy = shared;
  if (!shared) {
    let total = 0;
    for (const m of messages) total += m.length;
    copy = total <= RUN_BYTES;
  }
  const runs: UpdateRun[] = [];
  let i = 0;
  while (i < messages.length) {
    let j = i + 1;
    let size = messages[i].length;
    let adjacent = true;
    while (j < messages.length && size + messages[j].length <= RUN_BYTES) {
      const prev = messages[j - 1];
      const m = messages[j];
      if (m.buffer !== prev.buffer || m.byteOffset !== prev.byteOffset + prev.length) {
        if (!copy) break;
        adjacent = false;
      }
      size += m.length;
      j++;
    }
    if (j === i + 1) runs.push({ bytes: messages[i], count: 1 });
    else if (adjacent) runs.push({ bytes: new Uint8Array(messages[i].buffer, messages[i].byteOffset, size), count: j - i });
    else {
      const bytes = new Uint8Array(size);
      let at = 0;
      for (let k = i; k < j; k++) {
        bytes.set(messages[k], at);
        at += messages[k].length;
      }
      runs.push({ bytes, count: j - i });
    }
    i = j;
  }
  return runs;
}

/** A socket's 'error' listener: 'close' follows and reports it (one function for every connection). */
function ignoreError(): void {}

/** Send priority as BIRD orders it: NOTIFICATION > KEEPALIVE > OPEN > UPDATE (route refresh with UPDATE). */
const LANE: Record<MessageKind, number> = { notification: 0, keepalive: 1, open: 2, update: 3, routeRefresh: 3 };

/**
 * One BGP TCP connection: bytes in through the framer and the codec, typed
 * messages out through a priority queue that only fills while the socket
 * pushes back. Carries out no BGP logic.
 */
export class BgpConnection {
  private readonly framer = new Framer(MAX_MESSAGE);
  private readonly codec: Codec;
  private decodeCtx: CodecContext = LEGACY_CONTEXT;
  private encodeCtx: CodecContext = LEGACY_CONTEXT;
  /** Made when the socket first pushes back: an idle session never needs them. */
  private lanes?: Uint8Array[][];
  private blocked = false;
  private closing = false;
  private closed = false;
  private failed = false;
  private lingerTimer?: ReturnType<typeof setTimeout>;
  /** Bytes waiting in the lanes (not yet handed to the socket). */
  private laneBytes = 0;
  /** Writes the kernel has taken so far: moves while the peer reads (RFC 9687 "progress"). */
  private written = 0;
  private readonly onWritten = (): void => {
    this.written++;
  };
  /** Received bytes not yet framed (the first chunk may be a tail), while a slice is pending. */
  private inbox: Uint8Array[] = [];
  private readonly sliceMs: number;
  /** Set while handling one slice: when to stop. */
  private deadline = 0;
  /** Slices that ran out of time and left work for a later turn. */
  private yields = 0;
  private readonly frame = (type: number, body: Uint8Array): boolean => this.onFrame(type, body);
  /** Made at the first slice that runs out of time. */
  private resume?: () => void;
  /** A slice's budget is per turn of the event loop, shared by every 'data' event of that turn. */
  private turnStarted = false;
  private readonly endTurn = (): void => {
    this.turnStarted = false;
  };

  constructor(
    readonly socket: Socket,
    private readonly handlers: ConnectionHandlers,
    private readonly opts: ConnectionOptions = {},
  ) {
    this.codec = opts.codec ?? WIRE_CODEC;
    this.sliceMs = opts.sliceMs ?? DEFAULT_SLICE_MS;
    socket.setNoDelay(true);
    const ka = opts.tcpKeepAliveMs ?? 30_000;
    if (ka > 0) socket.setKeepAlive(true, ka);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => this.flush());
    socket.on('error', ignoreError);
    socket.on('close', () => {
      this.closed = true;
      if (this.lingerTimer) clearTimeout(this.lingerTimer);
      this.handlers.onClose();
    });
  }

  /** After both OPENs: what we agreed to read and to write. */
  setContexts(decode: CodecContext, encode: CodecContext): void {
    this.decodeCtx = decode;
    this.encodeCtx = encode;
    this.framer.maxSize = decode.extendedMessage ? MAX_EXTENDED_MESSAGE : MAX_MESSAGE;
  }

  get isOpen(): boolean {
    return !this.closed && !this.closing;
  }

  /** True when a send would go straight to the socket. */
  get writable(): boolean {
    return this.isOpen && !this.blocked;
  }

  /** Bytes of ours not yet taken by the kernel: our lanes plus the socket's own buffer. */
  get queuedBytes(): number {
    return this.laneBytes + this.socket.writableLength;
  }

  /** Bumped each time the kernel takes one of our writes; unchanged while the peer does not read. */
  get progress(): number {
    return this.written;
  }

  /** How many times reading paused to let the event loop run (a big burst is handled in slices). */
  get slices(): number {
    return this.yields;
  }

  /** Messages waiting for the socket, per lane (notification, keepalive, open, update). */
  get queued(): readonly number[] {
    return this.lanes?.map((l) => l.length) ?? [0, 0, 0, 0];
  }

  /** Queues one message; false when the connection is closing or closed (the message is dropped). */
  send(msg: Message): boolean {
    if (!this.isOpen) return false;
    return this.write(this.codec.encode(msg, this.encodeCtx), LANE[msg.type], msg.type === 'update');
  }

  /**
   * Queues whole, already encoded UPDATEs (header included, built for this
   * connection's encoding context by the packer): no decode, no re-encode.
   * Each run holds `count` of them back to back (`joinUpdates`); several runs
   * go to the kernel in one writev.
   */
  sendUpdateRuns(runs: readonly UpdateRun[]): boolean {
    if (!this.isOpen) return false;
    const cork = runs.length > 1 && !this.blocked;
    if (cork) this.socket.cork();
    for (const r of runs) this.write(r.bytes, LANE.update, true, r.count);
    if (cork) this.socket.uncork();
    return true;
  }

  private write(bytes: Uint8Array, lane: number, update: boolean, count = 1): boolean {
    const st = this.opts.stats;
    if (st) {
      st.messagesOut += count;
      if (update) st.updatesOut += count;
    }
    if (!this.blocked) {
      this.blocked = !this.socket.write(bytes, this.onWritten);
      if (this.blocked) this.handlers.onBlocked?.();
      return true;
    }
    (this.lanes ??= [[], [], [], []])[lane].push(bytes);
    this.laneBytes += bytes.length;
    return true;
  }

  private flush(): void {
    this.blocked = false;
    for (const lane of this.lanes ?? []) {
      while (lane.length > 0) {
        const bytes = lane.shift()!;
        this.laneBytes -= bytes.length;
        if (!this.socket.write(bytes, this.onWritten)) {
          this.blocked = true;
          return;
        }
      }
    }
    if (this.closing) {
      this.socket.end();
      return;
    }
    this.handlers.onDrain?.();
  }

  /**
   * Graceful close: UPDATEs still queued are dropped (the session is over),
   * NOTIFICATION and the rest are flushed, then FIN; destroyed after `lingerMs`.
   */
  close(): void {
    if (this.closed || this.closing) return;
    this.closing = true;
    const updates = this.lanes?.[3] ?? [];
    for (const b of updates) this.laneBytes -= b.length;
    updates.length = 0;
    this.lingerTimer = setTimeout(() => this.socket.destroy(), this.opts.lingerMs ?? 3000);
    this.lingerTimer.unref?.();
    if (!this.blocked) this.socket.end();
  }

  destroy(): void {
    this.closing = true;
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    // Still read while closing (so the peer's FIN is seen), but ignore what arrives.
    if (this.failed || this.closing) return;
    this.inbox.push(chunk);
    // A slice is pending (setImmediate): this chunk waits its turn behind the others.
    if (this.inbox.length === 1) this.pump();
  }

  /**
   * Frames and handles what is in the inbox until it is empty or the slice's
   * time is up; then pauses the socket and comes back on the next turn.
   */
  private pump(): void {
    if (!this.turnStarted) {
      this.turnStarted = true;
      this.deadline = performance.now() + this.sliceMs;
      setImmediate(this.endTurn);
    }
    try {
      while (this.inbox.length > 0) {
        if (this.failed || this.closing) {
          this.inbox = [];
          break;
        }
        if (performance.now() >= this.deadline) {
          this.yields++;
          this.socket.pause();
          setImmediate((this.resume ??= () => this.pump()));
          return;
        }
        const chunk = this.inbox[0];
        const used = this.framer.push(chunk, this.frame);
        if (used < chunk.length) this.inbox[0] = chunk.subarray(used);
        else this.inbox.shift();
      }
    } catch (e) {
      this.inbox = [];
      // A throwing handler is our bug, not bad input: let it surface.
      if (this.inHandler) {
        this.inHandler = false;
        throw e;
      }
      this.fail(e instanceof BgpError ? e : BgpError.cease('OUT_OF_RESOURCES', `internal error decoding a message: ${String(e)}`));
    }
    if (this.socket.isPaused()) this.socket.resume();
  }

  private inHandler = false;

  /** One frame: decode (with the contexts as they are now: an OPEN changes them for the next frame), hand on; false when the slice is over. */
  private onFrame(type: number, body: Uint8Array): boolean {
    if (this.closing) return false;
    const m = this.codec.decode(type, body, this.decodeCtx);
    const st = this.opts.stats;
    if (st) {
      st.messagesIn++;
      if (m.type === 'update') st.updatesIn++;
    }
    this.inHandler = true;
    this.handlers.onMessage(m);
    this.inHandler = false;
    return performance.now() < this.deadline;
  }

  /** Decode failure: NOTIFICATION with the error's code, then close, then tell the owner. */
  private fail(err: BgpError): void {
    this.failed = true;
    this.send(Notify.of(err));
    this.close();
    this.handlers.onError(err);
  }
}
