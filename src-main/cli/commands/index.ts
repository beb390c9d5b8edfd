/** Every `gpu-share` subcommand, in the order `--help` lists them. */
import type { Command, CommandGroup } from '../command';
import { addThisMachineCommand } from './add-this-machine';
import { detectCommand } from './detect';
import { eventsCommand } from './events';
import { jobsCommand } from './jobs/index';
import { nodesCommand } from './nodes/index';
import { residencyCommand } from './residency';
import { runsCommand } from './runs/index';
import { serveCommand } from './serve';
import { tokenCommand } from './token/index';
import { validateCommand } from './validate';
import { workerCommand } from './worker';
import { workersCommand } from './workers/index';

export const commands: (Command | CommandGroup)[] = [
  detectCommand,
  validateCommand,
  addThisMachineCommand,
  serveCommand,
  workerCommand,
  runsCommand,
  jobsCommand,
  workersCommand,
  eventsCommand,
  tokenCommand,
  nodesCommand,
  residencyCommand,
];
