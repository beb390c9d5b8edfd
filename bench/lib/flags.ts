/**
 * A bench's own options (`--kills 20`, `--timeout-ms 2000,5000`, `--timeline`), read from process.argv with
 * util.parseArgs. Each helper declares only its own flag and parses non-strictly, so a bench needs no central
 * list; a value out of range stops the bench with a message instead of silently running something else.
 */
import { parseArgs } from 'node:util';

function raw(name: string, type: 'string' | 'boolean'): string | boolean | undefined {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { [name]: { type } }, strict: false, allowPositionals: true });
  return values[name];
}

function refuse(message: string): never {
  console.error(`bench: ${message}`);
  process.exit(2);
}

/** `--name VALUE`, or undefined when not given. */
export function stringFlag(name: string): string | undefined {
  const v = raw(name, 'string');
  if (v === true || v === '') refuse(`--${name} needs a value`);
  return v === undefined ? undefined : String(v);
}

/** A whole-number flag `--name N` within [min, max], or the fallback when not given. */
export function intFlag(name: string, fallback: number, min = 1, max = 1_000_000): number {
  const v = stringFlag(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) refuse(`--${name} must be a whole number from ${min} to ${max}, got "${v}"`);
  return n;
}

/** A string flag `--name VALUE` among `allowed`, or the fallback when not given. */
export function choiceFlag<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
  const v = stringFlag(name);
  if (v === undefined) return fallback;
  if (!allowed.includes(v as T)) refuse(`--${name} must be one of ${allowed.join(', ')}, got "${v}"`);
  return v as T;
}

/** A boolean flag `--name`. */
export function hasFlag(name: string): boolean {
  return raw(name, 'boolean') === true;
}
