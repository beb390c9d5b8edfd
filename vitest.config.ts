import { defineConfig } from 'vitest/config';

// Four projects: fast pure/unit tests, integration tests with real processes, e2e tests in Chromium, and
// multihost tests: real hosts (network namespaces, as root) running the built app, one case at a time.
// mDNS would multicast on this machine's real interfaces; tests may only talk to loopback or to namespaces they
// made, so every app a test starts from this process's environment keeps discovery off (app/discovery-feature.ts).
// The multihost harness builds its hosts' environment from scratch: discovery stays on inside the namespaces.
process.env.GPU_SHARE_NO_DISCOVERY ??= '1';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/unit/**/*.test.tsx'],
          setupFiles: ['test/mocks/setup.ts'],
          environment: 'node',
          // In the full suite (every unit file across the workers of a 2-core machine) a 1 s case can take 6: the
          // default 5 s failed cases that were only slow. A case that hangs still fails, at 30 s.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'multihost',
          include: ['test/multihost/**/*.test.ts'],
          // Serial, after the unit files (groupOrder 1; vitest runs the integration and e2e files, which allow one
          // file at a time, in a group of their own after it): every case runs real training across hosts on a
          // 2-core machine and its failure-detection timings must not compete with other suites. Forks, so each
          // file's exit/signal hooks (namespace cleanup) run in a process of its own.
          sequence: { groupOrder: 1 },
          pool: 'forks',
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
