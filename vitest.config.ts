import { defineConfig } from 'vitest/config';

// Two projects: `unit` (pure core, loopback sockets; runs anywhere) and
// `interop` (real daemons in network namespaces; needs root and Debian's
// bird2/frr/gobgpd/exabgp). In CI a missing daemon fails rather than skips.
export default defineConfig({
  test: {
    expect: { requireAssertions: true },
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/interop/**', 'test/lab/**', 'node_modules/**'],
          testTimeout: 20_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'interop',
          include: ['test/interop/**/*.test.ts', 'test/lab/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
