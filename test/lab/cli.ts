/**
 * npm run lab -- up <topology.yml>
 * npm run lab -- down [<name>]
 * npm run lab -- exec [--lab <name>] <node> -- <cmd…>
 * npm run lab -- list
 * npm run lab -- clab <topology.yml>   print the same lab as a plain containerlab file
 *
 * Brings containerlab-style topologies up in network namespaces (needs root).
 * A lab brought up stays up after the command returns; its state is kept in
 * /run/tsbgp-lab/<name>.json for `down` and `exec`.
 */
import { loadTopology } from './topology.js';
import { toContainerlab } from './containerlab.js';
import { cleanupStale, Lab, listStates, saveState, type LabState } from './netns.js';

const USAGE = `usage:
  npm run lab -- up <topology.yml>
  npm run lab -- down [<name>]
  npm run lab -- exec [--lab <name>] <node> -- <command…>
  npm run lab -- list
  npm run lab -- clab <topology.yml>     (print a plain containerlab file)`;

function fail(msg: string): never {
  console.error(msg);
  process.exit(2);
}

function pickLab(name: string | undefined, node?: string): LabState {
  const states = listStates().filter((s) => (name ? s.name === name : true) && (node ? s.nodes.some((n) => n.name === node) : true));
  if (states.length === 0) fail(name ? `no lab named "${name}" is up` : node ? `no running lab has a node "${node}"` : 'no lab is up');
  if (states.length > 1) fail(`several labs match (${states.map((s) => s.name).join(', ')}); choose one with --lab <name>`);
  return states[0];
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'clab') {
    if (!rest[0]) fail(USAGE);
    process.stdout.write(toContainerlab(loadTopology(rest[0])));
    return;
  }
  if (process.getuid?.() !== 0 && command !== undefined && command !== 'help') fail('the lab needs root (network namespaces)');
  switch (command) {
    case 'up': {
      const file = rest[0];
      if (!file) fail(USAGE);
      const topo = loadTopology(file);
      if (listStates().some((s) => s.name === topo.name)) fail(`lab "${topo.name}" is already up; run "npm run lab -- down ${topo.name}" first`);
      for (const r of cleanupStale()) console.log(`removed stale ${r}`);
      const lab = await Lab.up(topo, { runId: `c${process.pid}`, log: (s) => console.log(s) });
      saveState(lab.state);
      console.log(`lab "${topo.name}" is up:`);
      for (const n of lab.state.nodes) console.log(`  ${n.name.padEnd(12)} ${n.kind.padEnd(7)} ip netns exec ${n.ns} …`);
      break;
    }
    case 'down': {
      const states = rest[0] ? [pickLab(rest[0])] : listStates();
      for (const s of states) {
        Lab.fromState(s).teardown();
        console.log(`lab "${s.name}" is down`);
      }
      for (const r of cleanupStale()) console.log(`removed stale ${r}`);
      break;
    }
    case 'exec': {
      let labName: string | undefined;
      const args = [...rest];
      if (args[0] === '--lab') {
        labName = args[1];
        args.splice(0, 2);
      }
      const node = args[0];
      const sep = args.indexOf('--');
      if (!node || node === '--' || sep !== 1 || sep === args.length - 1) fail(USAGE);
      const cmd = args.slice(sep + 1);
      const lab = Lab.fromState(pickLab(labName, node));
      const r = lab.exec(node, cmd.length === 1 ? cmd[0] : cmd, { timeoutMs: 300_000 });
      process.stdout.write(r.stdout);
      process.stderr.write(r.stderr);
      process.exit(r.status);
    }
    case 'list': {
      for (const s of listStates()) console.log(`${s.name}: ${s.nodes.map((n) => `${n.name}(${n.kind})`).join(' ')}`);
      break;
    }
    default:
      fail(USAGE);
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
