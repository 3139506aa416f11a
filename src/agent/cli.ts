import { readFileSync } from 'node:fs';

const USAGE = `usage: tsbgp <command> [options]

commands:
  version        print the version
  help           this text
`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export async function main(argv: string[]): Promise<number> {
  const [cmd] = argv;
  if (cmd === 'version' || cmd === '--version') {
    process.stdout.write(`tsbgp ${version()}\n`);
    return 0;
  }
  if (cmd === undefined || cmd === 'help' || cmd === '--help') {
    process.stdout.write(USAGE);
    return 0;
  }
  process.stderr.write(`tsbgp: unknown command ${JSON.stringify(cmd)}\n${USAGE}`);
  return 2;
}
