/** `GPU_SHARE_JOIN_TOKEN=T gpu-share worker --join URL [--cert-sha256 HEX]`: run this machine as a worker of a coordinator until stopped or drained. */
import { runWorker, WORKER_USAGE } from '../run-worker';
import type { Command } from '../command';

export const workerCommand: Command = {
  name: 'worker',
  summary: 'join a coordinator as a worker and run the training it gives this machine',
  usage: WORKER_USAGE,
  run: (args, io) => runWorker(args, io, { handleSignals: true }),
};
