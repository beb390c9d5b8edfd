/**
 * Entry point of a standalone worker agent process (dist/main/agent-process.cjs, or
 * `node scripts/run-ts.mjs src-main/cli/agent-process.ts --join URL --token T …`). Same options and output as
 * `gpu-share worker`; kept separate so tests and benchmarks can start agents without the whole CLI.
 */
import { UsageError } from './command';
import { runWorker, WORKER_USAGE } from './run-worker';

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(WORKER_USAGE);
} else {
  runWorker(args, {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    env: process.env,
    cwd: process.cwd(),
  }, { handleSignals: true }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      if (error instanceof UsageError) {
        process.stderr.write(`gpu-share worker: ${error.message}\n\n${WORKER_USAGE}`);
        process.exitCode = 2;
        return;
      }
      process.stderr.write(`gpu-share worker: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
