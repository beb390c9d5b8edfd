/** What every `gpu-share` subcommand looks like, and the command-line parsing they share (Node's util.parseArgs). */
import { parseArgs as nodeParseArgs, type ParseArgsConfig } from 'node:util';
import { closest } from '../../src-shared/cluster/yaml-scalars';

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

/** `gpu-share runs start …`: a command made of subcommands, each with its own usage. */
export interface CommandGroup {
  name: string;
  summary: string;
  /** What the group is for; the list of its subcommands is added below it. */
  usage: string;
  subcommands: Command[];
}

/** Thrown for a bad command line; main prints it with the command's usage and exits 2. */
export class UsageError extends Error {}

export type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/**
 * util.parseArgs in strict mode, with its errors turned into UsageErrors that name the flag (and the closest
 * known one for a typo). An empty value (`--cluster=`) is refused like a missing one.
 */
export function parseCommandLine<const T extends OptionsConfig>(args: string[], options: T) {
  let parsed;
  try {
    parsed = nodeParseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageErrorFrom(error, Object.keys(options));
  }
  for (const [name, value] of Object.entries(parsed.values)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.includes('')) throw new UsageError(`--${name} needs a value`);
  }
  return parsed;
}

function usageErrorFrom(error: unknown, known: string[]): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const flag = /'(--?[^' <]+)/.exec(message)?.[1] ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const guess = closest(flag.replace(/^-+/, ''), known);
    return new UsageError(`unknown option ${flag}${guess ? ` (did you mean --${guess}?)` : ''}`);
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (message.includes('does not take an argument')) return new UsageError(`${flag} takes no value`);
    if (message.includes('ambiguous')) return new UsageError(`${flag} needs a value (one that starts with "-" is written ${flag}=-VALUE)`);
    return new UsageError(`${flag} needs a value`);
  }
  if (code?.startsWith('ERR_PARSE_ARGS')) return new UsageError(message);
  return error;
}

/** Refuses positionals beyond `allowed`, naming the first one. */
export function noMorePositionals(positionals: readonly string[], allowed = 0, hint = ''): void {
  const stray = positionals[allowed];
  if (stray !== undefined) throw new UsageError(`unexpected argument "${stray}"${hint}`);
}

/** A whole-number option within bounds, with a message naming the flag. */
export function intOption(raw: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) {
    throw new UsageError(`--${name} must be ${max >= Number.MAX_SAFE_INTEGER ? `at least ${min}` : `between ${min} and ${max}`}, got ${n}`);
  }
  return n;
}
