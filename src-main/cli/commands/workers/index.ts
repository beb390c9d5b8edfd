/** `gpu-share workers …`: see, approve, revoke and drain the machines that joined the local app's coordinator. */
import type { CommandGroup } from '../../command';
import { workersAcceptKeyCommand } from './workers-accept-key';
import { workersApproveCommand } from './workers-approve';
import { workersDrainCommand } from './workers-drain';
import { workersForgetCommand } from './workers-forget';
import { workersLinksCommand } from './workers-links';
import { workersListCommand } from './workers-list';
import { workersRevokeCommand } from './workers-revoke';

export const workersCommand: CommandGroup = {
  name: 'workers',
  summary: 'list the workers and machines awaiting approval, approve, revoke, drain, forget an offline one, accept a node\'s new key, show the links between them (talks to the running app)',
  usage: `Usage: gpu-share workers <command> [options]

The workers of the GPU Share coordinator on this machine (the desktop app or \`gpu-share serve\`), over its
API with the operator token from the data folder. Every command takes --json.`,
  subcommands: [workersListCommand, workersLinksCommand, workersApproveCommand, workersRevokeCommand, workersDrainCommand, workersForgetCommand, workersAcceptKeyCommand],
};
