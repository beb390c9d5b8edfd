/** Dispatch and help for `gpu-share`, separated from process wiring so tests can call it directly. */
import { UsageError, type CliIo, type Command } from './command';
import { commands } from './commands/index';

function overview(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    'gpu-share — train across the machines you own, as one elastic cluster',
    '',
    'Usage: gpu-share <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run `gpu-share <command> --help` for the options of one command.',
    '',
  ].join('\n');
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
  const command: Command | undefined = commands.find((c) => c.name === name);
  if (!command) {
    io.err(`gpu-share: unknown command "${name}"\n\n${overview()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(command.usage.endsWith('\n') ? command.usage : `${command.usage}\n`);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`gpu-share ${name}: ${error.message}\n\n${command.usage}\n`);
      return 2;
    }
    throw error;
  }
}
