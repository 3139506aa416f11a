import { main, type CliIO } from '../../src/agent/cli.js';

/** Runs the CLI in-process with captured output. */
export async function run(argv: string[], io: CliIO = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), ...io });
  return { code, stdout, stderr };
}
