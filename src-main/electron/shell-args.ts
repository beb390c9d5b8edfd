/** Reads the shell's own options from Electron's argv, ignoring Chromium switches and the app path. */
import path from 'node:path';

export interface ShellArgs {
  /** --cluster PATH (or --cluster=PATH), resolved against the working directory. */
  clusterPath?: string;
}

export function parseShellArgs(argv: readonly string[], cwd: string): ShellArgs {
  const args: ShellArgs = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    let value: string | undefined;
    if (arg === '--cluster') value = argv[i + 1];
    else if (arg.startsWith('--cluster=')) value = arg.slice('--cluster='.length);
    else continue;
    if (value && !value.startsWith('--')) args.clusterPath = path.resolve(cwd, value);
    if (arg === '--cluster') i += 1;
  }
  return args;
}
