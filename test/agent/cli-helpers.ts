import { createServer, type AddressInfo } from 'node:net';
import { main, type CliIO } from '../../src/agent/cli.js';

/** Runs the CLI in-process with captured output. */
export async function run(argv: string[], io: CliIO = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), ...io });
  return { code, stdout, stderr };
}

/** A TCP port free on 127.0.0.1 right now (for a child process to listen on). */
export function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}
