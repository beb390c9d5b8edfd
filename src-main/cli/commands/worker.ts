/**
 * `gpu-share worker`: run this machine as a worker until stopped (`GPU_SHARE_JOIN_TOKEN=T gpu-share worker --join
 * URL …`, cli/run-worker.ts), or keep it one as a service: `worker install | uninstall | status`
 * (commands/worker/, platform/service/).
 */
import { runWorker, WORKER_USAGE } from '../run-worker';
import type { CliIo, Command } from '../command';
import { isServiceSubcommand } from './worker/service-args';
import { realServiceDeps, type ServiceCliDeps } from './worker/service-cli-deps';
import { SERVICE_SYNOPSIS, SERVICE_USAGE } from './worker/service-usage';
import { runWorkerInstall } from './worker/worker-install';
import { runWorkerStatus, runWorkerUninstall } from './worker/worker-service-state';

const firstBreak = WORKER_USAGE.indexOf('\n\n');
const usage = `${WORKER_USAGE.slice(0, firstBreak)}\n${SERVICE_SYNOPSIS}${WORKER_USAGE.slice(firstBreak)}\n${SERVICE_USAGE}`;

/** The service subcommands with the machine's own deps, or a test's. */
export function runWorkerService(args: string[], io: CliIo, deps: ServiceCliDeps = realServiceDeps()): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'install') return runWorkerInstall(rest, io, deps);
  if (sub === 'uninstall') return runWorkerUninstall(rest, io, deps);
  return runWorkerStatus(rest, io, deps);
}

export const workerCommand: Command = {
  name: 'worker',
  summary: 'join a coordinator as a worker, or install / uninstall / show this machine as a worker service',
  usage,
  run: (args, io) => (isServiceSubcommand(args[0]) ? runWorkerService(args, io) : runWorker(args, io, { handleSignals: true })),
};
