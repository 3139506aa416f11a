#!/usr/bin/env node
// The command runs the compiled agent in dist/; `npm install` (its "prepare" script) or `npm run build` makes it.
let cli;
let exit;
try {
  cli = await import('../dist/src/agent/cli.js');
  exit = await import('../dist/src/agent/exit.js');
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('/dist/src/')) throw err;
  const root = new URL('..', import.meta.url).pathname;
  process.stderr.write(`tsbgp: not built yet: ${root}dist/ is missing. Run \`npm run build\` in ${root} (npm install does it), or run it from source: node --import tsx src/agent/main.ts\n`);
  process.exit(1);
}
const { main } = cli;
const { exitAfterDrain } = exit;

// exitAfterDrain: a large `plan`/`status`/`routes` through a pipe is written out whole before the process leaves.
main(process.argv.slice(2)).then(
  (code) => exitAfterDrain(code),
  (err) => {
    process.stderr.write(`tsbgp: ${err instanceof Error ? err.message : String(err)}\n`);
    return exitAfterDrain(1);
  },
);
