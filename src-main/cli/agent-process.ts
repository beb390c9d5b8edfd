/**
 * Entry point of a standalone worker agent process (dist/main/agent-process.cjs, or
 * `node scripts/run-ts.mjs src-main/cli/agent-process.ts --join URL --token T …`). Same options and output as
 * `gpu-share worker`; kept separate so tests and benchmarks can start agents without the whole CLI. As the agent
 * bundle SSH nodes get (dist/agent/gpu-share-agent.cjs), it also answers `worker …` exactly as the CLI's
 * `gpu-share worker …` does (`worker install|uninstall|status`): the app's "Start and keep" runs that over SSH.
 */
import { UsageError } from './command';
import { workerCommand } from './commands/worker';
import { runWorker, WORKER_USAGE } from './run-worker';

const args = process.argv.slice(2);
const io = {
  out: (t: string) => process.stdout.write(t),
  err: (t: string) => process.stderr.write(t),
  env: process.env,
  cwd: process.cwd(),
};
if (args[0] !== 'worker' && (args.includes('--help') || args.includes('-h'))) {
  process.stdout.write(WORKER_USAGE);
} else {
  (args[0] === 'worker' ? workerCommand.run(args.slice(1), io) : runWorker(args, io, { handleSignals: true })).then(
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
