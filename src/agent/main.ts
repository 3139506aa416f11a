/** Entry point when run from source: `node --import tsx src/agent/main.ts <command> …`. */
import { main } from './cli.js';
import { exitAfterDrain } from './exit.js';

main(process.argv.slice(2)).then(
  (code) => exitAfterDrain(code),
  (err: unknown) => {
    process.stderr.write(`tsbgp: ${err instanceof Error ? err.message : String(err)}\n`);
    return exitAfterDrain(1);
  },
);
