/** `gpu-share token …`: the cluster's join token. */
import type { CommandGroup } from '../../command';
import { tokenRotateCommand } from './token-rotate';

export const tokenCommand: CommandGroup = {
  name: 'token',
  summary: 'replace the join token (talks to the running app)',
  usage: `Usage: gpu-share token <command> [options]

The join token of the GPU Share coordinator on this machine (the desktop app or \`gpu-share serve\`), over its
API with the operator token from the data folder.`,
  subcommands: [tokenRotateCommand],
};
