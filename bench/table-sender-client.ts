/** Starts and drives bench/table-sender.ts (a router in its own process). */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'table-sender.ts');

export interface SenderReply {
  readonly done?: string;
  readonly error?: string;
  readonly state?: string;
  readonly advertised?: number;
  readonly sendQueueBytes?: number;
}

export class TableSender {
  private readonly waiting: ((r: SenderReply) => void)[] = [];
  private stderr = '';

  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {}

  /** Resolves once the sender listens (its table originated). `prefix` runs it under a wrapper, e.g. `ip netns exec NS`. */
  static async start(
    routes: number,
    listen: string,
    peer: string,
    opts: { peerAsn?: number; prefix?: readonly string[]; timeoutMs?: number } = {},
  ): Promise<TableSender> {
    const args = ['--import', 'tsx', SCRIPT, String(routes), listen, peer, String(opts.peerAsn ?? 64512)];
    const [cmd, ...pre] = opts.prefix ?? [];
    const child = cmd
      ? spawn(cmd, [...pre, process.execPath, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
      : spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const lines = createInterface({ input: child.stdout! });
    const port = await new Promise<number>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`table sender did not start within ${opts.timeoutMs ?? 120_000} ms: ${err}`)), opts.timeoutMs ?? 120_000);
      child.once('exit', (code) => {
        clearTimeout(t);
        reject(new Error(`table sender exited (${code}): ${err}`));
      });
      lines.once('line', (l) => {
        clearTimeout(t);
        resolve((JSON.parse(l) as { port: number }).port);
      });
    });
    const s = new TableSender(child, port);
    s.stderr = err;
    child.stderr!.on('data', (d: Buffer) => (s.stderr += d.toString()));
    lines.on('line', (l) => s.waiting.shift()?.(JSON.parse(l) as SenderReply));
    return s;
  }

  /** `withdraw`, `announce` or `status`; resolves with the sender's answer once it has applied it. */
  command(cmd: 'withdraw' | 'announce' | 'status'): Promise<SenderReply> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.stdin!.write(`${cmd}\n`);
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const gone = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.stdin!.end();
    const t = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(t);
  }
}
