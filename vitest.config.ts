import { defineConfig } from 'vitest/config';

// Five projects: fast pure/unit tests (those that mock a module of the app apart, isolated), integration tests with real processes, e2e tests in Chromium, and
// multihost tests: real hosts (network namespaces, as root) running the built app, one case at a time.
// mDNS would multicast on this machine's real interfaces; tests may only talk to loopback or to namespaces they
// made, so every app a test starts from this process's environment keeps discovery off (app/discovery-feature.ts).
// The multihost harness builds its hosts' environment from scratch: discovery stays on inside the namespaces.
process.env.GPU_SHARE_NO_DISCOVERY ??= '1';

// Unit files that replace one of the app's own modules with vi.mock: the replacement would stay in a shared
// module cache for the files after them, so they run isolated, each in a fresh module cache.
const UNIT_WITH_MODULE_MOCKS = ['test/unit/identity/approval.test.ts'];

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/unit/**/*.test.tsx'],
          exclude: UNIT_WITH_MODULE_MOCKS,
          setupFiles: ['test/mocks/setup.ts'],
          environment: 'node',
          // Files share a worker's module cache instead of each importing the app afresh: on 2 cores the fresh
          // imports took ~2.5 s a file, over half of the unit phase (319 files, 627 s in CI's run). A file that
          // mocks one of the app's own modules must not share it: those run in 'unit-isolated'.
          isolate: false,
          // In the full suite (every unit file across the workers of a 2-core machine) a 1 s case can take 6: the
          // default 5 s failed cases that were only slow. A case that hangs still fails, at 30 s.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'unit-isolated',
          include: UNIT_WITH_MODULE_MOCKS,
          setupFiles: ['test/mocks/setup.ts'],
          environment: 'node',
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
          // Not beside the integration files either: 8 e2e files alone on this 2-core machine at load 15–18 (other
          // work) took 696 s and run-flow (its live output) and expected-tracebacks (a worker ready within 60 s)
          // failed; an integration file's torch training at the same time would only add to that load.
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
