/** Every `gpu-share` subcommand, in the order `--help` lists them. */
import type { Command } from '../command';

export const commands: Command[] = [];
