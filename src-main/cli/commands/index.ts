/** Every `gpu-share` subcommand, in the order `--help` lists them. */
import type { Command } from '../command';
import { addThisMachineCommand } from './add-this-machine';
import { detectCommand } from './detect';
import { residencyCommand } from './residency';
import { serveCommand } from './serve';
import { validateCommand } from './validate';
import { workerCommand } from './worker';

export const commands: Command[] = [
  detectCommand,
  validateCommand,
  addThisMachineCommand,
  serveCommand,
  workerCommand,
  residencyCommand,
];
