/**
 * Readers of single cluster.yaml fields (text, whole numbers, choices): each checks its value's type and
 * range, reports a problem at the value's line and column, and says what a missing field should hold.
 */
import { isScalar } from 'yaml';
import { formatPath } from './format-issue';
import type { Path, Reader } from './yaml-reader';
import { describe, scalarText } from './yaml-scalars';

/** u64 fields are held as JS numbers, so the ceiling is the largest integer a double stores exactly. */
export const MAX_WHOLE = Number.MAX_SAFE_INTEGER;
export const MAX_U32 = 0xffff_ffff;

const MISSING_HINTS: Record<string, string> = {
  name: 'a unique name for the node, e.g. name: desktop',
  host: 'the address to reach it: localhost for this machine, or a hostname or IP for ssh',
  uuid: 'the GPU UUID that `nvidia-smi -L` prints, e.g. GPU-abcd-1234',
  type: 'a type slug such as rtx-4090 or jetson-orin',
  vram_mb: "the GPU's memory in MB, e.g. vram_mb: 24564",
};

export type Field = { value: unknown; keyOffset: number } | undefined;

/** An absent or null field: undefined when it is optional, else null after reporting it missing at offset. */
function absent(r: Reader, path: Path, required: boolean, offset: number): undefined | null {
  if (!required) return undefined;
  const name = String(path[path.length - 1]);
  r.error(`${formatPath(path)} is missing (${MISSING_HINTS[name] ?? 'required'})`, path, offset);
  return null;
}

interface TextOptions {
  required: boolean;
  mapOffset: number;
}

/** A string field. Returns undefined when absent (optional) and null after reporting an error. */
export function readText(r: Reader, field: Field, path: Path, opts: TextOptions): string | undefined | null {
  if (!field) return absent(r, path, opts.required, opts.mapOffset);
  const node = r.deref(field.value, path, field.keyOffset);
  if (node === 'failed') return null;
  const offset = r.offsetOf(node, field.keyOffset);
  const text = node === null ? null : scalarText(node);
  if (text === null) {
    if (node !== null && !isScalar(node)) {
      r.error(`${formatPath(path)} must be text, got ${describe(node)}`, path, offset);
      return null;
    }
    return absent(r, path, opts.required, offset);
  }
  if (opts.required && text.trim() === '') {
    r.error(`${formatPath(path)} must not be empty`, path, offset);
    return null;
  }
  return text;
}

interface NumberOptions {
  required: boolean;
  unit: string;
  max: number;
  mapOffset: number;
}

/** A whole-number field (entrenar's u64/u32/usize). Returns undefined when absent and null after an error. */
export function readWhole(r: Reader, field: Field, path: Path, opts: NumberOptions): number | undefined | null {
  if (!field) return absent(r, path, opts.required, opts.mapOffset);
  const node = r.deref(field.value, path, field.keyOffset);
  if (node === 'failed') return null;
  const offset = r.offsetOf(node, field.keyOffset);
  const value = node !== null && isScalar(node) ? node.value : undefined;
  if ((node === null || value === null) && !opts.required) return undefined;
  const what = `a whole number${opts.unit ? ` of ${opts.unit}` : ''}`;
  if (typeof value !== 'bigint' || value < 0n) {
    r.error(`${formatPath(path)} must be ${what}, got ${describe(node)}`, path, offset);
    return null;
  }
  if (value > BigInt(opts.max)) {
    r.error(`${formatPath(path)} must be ${what} no larger than ${opts.max}, got ${describe(node)}`, path, offset);
    return null;
  }
  return Number(value);
}

/** A lower-case enum field with a default. Returns null after an error. */
export function readChoice<T extends string>(r: Reader, field: Field, path: Path, choices: readonly T[], fallback: T): T | null {
  if (!field) return fallback;
  const node = r.deref(field.value, path, field.keyOffset);
  if (node === 'failed') return null;
  const offset = r.offsetOf(node, field.keyOffset);
  const text = node !== null && isScalar(node) ? scalarText(node) : null;
  const found = choices.find((c) => c === text);
  if (found) return found;
  const caseHint = text !== null && choices.some((c) => c === text.toLowerCase()) ? ' (write it in lower case)' : '';
  r.error(`${formatPath(path)} must be ${choices.join(' or ')}, got ${describe(node)}${caseHint}`, path, offset);
  return null;
}
