/** `gpu-share runs …`: start, watch and stop training runs on the local app's coordinator. */
import type { CommandGroup } from '../../command';
import { runsArtifactCommand } from './runs-artifact';
import { runsDeleteCommand } from './runs-delete';
import { runsNoteCommand, runsTagCommand } from './runs-label';
import { runsListCommand } from './runs-list';
import { runsLogsCommand } from './runs-logs';
import { runsShowCommand } from './runs-show';
import { runsStartCommand } from './runs-start';
import { runsStopCommand } from './runs-stop';

export const runsCommand: CommandGroup = {
  name: 'runs',
  summary: 'start, list, show, stop, delete, tag and follow training runs, and download their output (talks to the running app)',
  usage: `Usage: gpu-share runs <command> [options]

Drives the runs of the GPU Share coordinator on this machine (the desktop app or \`gpu-share serve\`) over
its API, with the operator token from the data folder. Every command takes --json.`,
  subcommands: [runsStartCommand, runsListCommand, runsShowCommand, runsLogsCommand, runsStopCommand, runsDeleteCommand, runsArtifactCommand, runsTagCommand, runsNoteCommand],
};
