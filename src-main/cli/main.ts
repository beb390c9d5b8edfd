/** Entry point of the `gpu-share` command: dispatches to one module per subcommand. */
import { runCli } from './run-cli';

runCli(process.argv.slice(2), {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  env: process.env,
  cwd: process.cwd(),
}).then(
  (code) => {
    // Long-running commands (serve, worker) resolve only when they are done.
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`gpu-share: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
