/** Every `gpu-share` subcommand, in the order `--help` lists them. */
import type { Command } from '../command';
import { workerCommand } from './worker';

export const commands: Command[] = [workerCommand];
