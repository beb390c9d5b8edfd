/** Every `gpu-share` subcommand, in the order `--help` lists them. */
import type { Command } from '../command';
import { detectCommand } from './detect';
import { residencyCommand } from './residency';
import { serveCommand } from './serve';
import { validateCommand } from './validate';
import { workerCommand } from './worker';

export const commands: Command[] = [detectCommand, validateCommand, residencyCommand, serveCommand, workerCommand];
