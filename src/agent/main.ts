/** Entry point when run from source: `node --import tsx src/agent/main.ts <command> …`. */
import { main } from './cli.js';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`tsbgp: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
