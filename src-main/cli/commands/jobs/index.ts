/** `gpu-share jobs …`: submit adapter-job manifests, watch the queue, act on one job, download artifacts. */
import type { CommandGroup } from '../../command';
import { jobsArtifactCommand } from './jobs-artifact';
import { jobsArtifactsCommand } from './jobs-artifacts';
import { jobsCancelCommand } from './jobs-cancel';
import { jobsDeleteCommand } from './jobs-delete';
import { jobsListCommand } from './jobs-list';
import { jobsReloadCommand } from './jobs-reload';
import { jobsRequeueCommand } from './jobs-requeue';
import { jobsShowCommand } from './jobs-show';
import { jobsSubmitCommand } from './jobs-submit';

export const jobsCommand: CommandGroup = {
  name: 'jobs',
  summary: 'submit job manifests, list and show jobs, cancel, requeue, download artifacts (talks to the running app)',
  usage: `Usage: gpu-share jobs <command> [options]

Drives the adapter-job queue of the GPU Share coordinator on this machine (the desktop app or \`gpu-share
serve\`) over its API, with the operator token from the data folder. A job is one training (a LoRA adapter, one
point of a sweep) that the coordinator places on one node's slot and VRAM budget; a manifest (TOML,
docs/jobs.md) lists them. Every command takes --json.`,
  subcommands: [jobsSubmitCommand, jobsReloadCommand, jobsListCommand, jobsShowCommand, jobsCancelCommand, jobsRequeueCommand, jobsDeleteCommand, jobsArtifactCommand, jobsArtifactsCommand],
};
