/** What every `gpu-share` subcommand looks like, and the tiny flag parser they share. */

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export interface Command {
  name: string;
  /** One line for `gpu-share --help`. */
  summary: string;
  /** Full help text for `gpu-share NAME --help`. */
  usage: string;
  /** Returns the exit code. */
  run(args: string[], io: CliIo): Promise<number>;
}

export interface ParsedArgs {
  flags: Record<string, string | true>;
  positionals: string[];
}

/** Thrown for a bad command line; main prints it with the command's usage and exits 2. */
export class UsageError extends Error {}

/**
 * Parses `--flag value`, `--flag=value` and boolean `--flag`. `valueFlags` lists flags that take a value;
 * anything else starting with -- is boolean. Unknown flags are refused so typos don't pass silently.
 */
export function parseArgs(args: string[], valueFlags: string[], boolFlags: string[] = []): ParsedArgs {
  const flags: Record<string, string | true> = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq === -1 ? a.slice(2) : a.slice(2, eq);
      if (valueFlags.includes(name)) {
        const value = eq === -1 ? args[++i] : a.slice(eq + 1);
        if (value === undefined || value === '') throw new UsageError(`--${name} needs a value`);
        flags[name] = value;
      } else if (boolFlags.includes(name) || name === 'help') {
        if (eq !== -1) throw new UsageError(`--${name} takes no value`);
        flags[name] = true;
      } else {
        throw new UsageError(`unknown option --${name}`);
      }
    } else if (a === '-h') {
      flags.help = true;
    } else {
      positionals.push(a);
    }
  }
  return { flags, positionals };
}

export function flagString(parsed: ParsedArgs, name: string): string | undefined {
  const v = parsed.flags[name];
  return typeof v === 'string' ? v : undefined;
}

/** Parses an integer flag within bounds, with a message naming the flag. */
export function flagInt(parsed: ParsedArgs, name: string, fallback: number, min: number, max: number): number {
  const raw = flagString(parsed, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}
