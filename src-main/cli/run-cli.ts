/** Dispatch and help for `gpu-share`, separated from process wiring so tests can call it directly. */
import { UsageError, type CliIo, type Command, type CommandGroup } from './command';
import { commands } from './commands/index';

function listing(list: readonly (Command | CommandGroup)[]): string[] {
  const width = Math.max(...list.map((c) => c.name.length));
  return list.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
}

function overview(): string {
  return [
    'gpu-share — train across the machines you own, as one elastic cluster',
    '',
    'Usage: gpu-share <command> [options]',
    '',
    'Commands:',
    ...listing(commands),
    '',
    'Run `gpu-share <command> --help` for the options of one command.',
    '',
  ].join('\n');
}

/** Usage of a command made of subcommands: its own text, then the list of them. */
function groupUsage(group: CommandGroup): string {
  return [group.usage.trimEnd(), '', 'Commands:', ...listing(group.subcommands), '', `Run \`gpu-share ${group.name} <command> --help\` for the options of one.`, ''].join('\n');
}

/** `--help` asks for help only before `--`: after it, the words belong to the training command. */
function wantsHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** The usage's first paragraph ("Usage: gpu-share … [options]"), shown under a usage error instead of the whole text. */
function synopsis(usage: string): string {
  const end = usage.indexOf('\n\n');
  return withNewline(end === -1 ? usage : usage.slice(0, end));
}

function withNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(overview());
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-v') {
    io.out('gpu-share 0.1.0\n');
    return 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.err(`gpu-share: unknown command "${name}"\n\n${overview()}`);
    return 2;
  }
  return 'subcommands' in command ? runGroup(command, rest, io) : runOne(command, `gpu-share ${name}`, rest, io);
}

async function runGroup(group: CommandGroup, argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    if (name) io.out(groupUsage(group));
    else io.err(groupUsage(group));
    return name ? 0 : 2;
  }
  const command = group.subcommands.find((c) => c.name === name);
  if (!command) {
    io.err(`gpu-share ${group.name}: unknown command "${name}"\n\n${groupUsage(group)}`);
    return 2;
  }
  return runOne(command, `gpu-share ${group.name} ${name}`, rest, io);
}

async function runOne(command: Command, label: string, args: string[], io: CliIo): Promise<number> {
  if (wantsHelp(args)) {
    io.out(withNewline(command.usage));
    return 0;
  }
  try {
    return await command.run(args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${label}: ${error.message}\n\n${synopsis(command.usage)}Run \`${label} --help\` for every option.\n`);
      return 2;
    }
    throw error;
  }
}
