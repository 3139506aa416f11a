#!/usr/bin/env node
import { main } from '../dist/src/agent/cli.js';
import { exitAfterDrain } from '../dist/src/agent/exit.js';

// exitAfterDrain: a large `plan`/`status`/`routes` through a pipe is written out whole before the process leaves.
main(process.argv.slice(2)).then(
  (code) => exitAfterDrain(code),
  (err) => {
    process.stderr.write(`tsbgp: ${err instanceof Error ? err.message : String(err)}\n`);
    return exitAfterDrain(1);
  },
);
