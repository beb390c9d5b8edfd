/** `gpu-share workers …`: see and drain the machines that joined the local app's coordinator. */
import type { CommandGroup } from '../../command';
import { workersAcceptKeyCommand } from './workers-accept-key';
import { workersDrainCommand } from './workers-drain';
import { workersListCommand } from './workers-list';

export const workersCommand: CommandGroup = {
  name: 'workers',
  summary: 'list the workers, drain one, accept a node\'s new key (talks to the running app)',
  usage: `Usage: gpu-share workers <command> [options]

The workers of the GPU Share coordinator on this machine (the desktop app or \`gpu-share serve\`), over its
API with the operator token from the data folder. Every command takes --json.`,
  subcommands: [workersListCommand, workersDrainCommand, workersAcceptKeyCommand],
};
