/**
 * Typed reads of one manifest table's fields, each problem collected (never thrown) with its path and a
 * message that names the field, what it got and what to write instead.
 */
import { TomlDate } from 'smol-toml';
import { formatPath } from '../../../../src-shared/cluster/format-issue';
import { utf8ByteLength } from '../../../../src-shared/cluster/read-yaml';
import { closest, truncate } from '../../../../src-shared/cluster/yaml-scalars';
import type { PathPart } from './toml-positions';

/** Longest string value (or key) accepted, in UTF-8 bytes. */
export const MAX_MANIFEST_STRING_BYTES = 4096;

export interface PendingIssue {
  message: string;
  path: PathPart[];
  /** Point at the key (unknown key) or at its value (wrong value). */
  at: 'key' | 'value';
}

export type Table = Record<string, unknown>;

export function isTable(value: unknown): value is Table {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof TomlDate);
}

/** What a value is, for "got …". */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `a string (${JSON.stringify(truncate(value))})`;
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'nan';
    if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
    return `the number ${value}`;
  }
  if (typeof value === 'bigint') return `the integer ${value}`;
  if (typeof value === 'boolean') return `the boolean ${value}`;
  if (Array.isArray(value)) return 'a list';
  if (value instanceof TomlDate) return 'a date';
  if (isTable(value)) return 'a table';
  return 'nothing';
}

/** A string's problem (too long, control characters), or null. */
export function stringProblem(value: string, allowControl = false): string | null {
  if (utf8ByteLength(value, MAX_MANIFEST_STRING_BYTES) > MAX_MANIFEST_STRING_BYTES) {
    return `is longer than ${MAX_MANIFEST_STRING_BYTES} bytes; shorten it`;
  }
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is looked for
  if (!allowControl && /[\u0000-\u001f\u007f-\u009f]/.test(value)) return 'contains a control character (a line break, tab or NUL); remove it';
  if (allowControl && value.includes('\u0000')) return 'contains a NUL character, which no program argument can hold; remove it';
  return null;
}

export class IssueList {
  readonly items: PendingIssue[] = [];

  add(path: PathPart[], message: string, at: 'key' | 'value' = 'value'): void {
    this.items.push({ message, path, at });
  }
}

interface NumberRule {
  min: number;
  max?: number;
  integer?: boolean;
  /** Added to the range message: why this range. */
  why?: string;
}

/** Reads the fields of one table at `path`; every read records its own problem and returns undefined. */
export class FieldReader {
  constructor(
    private readonly table: Table,
    readonly path: PathPart[],
    private readonly issues: IssueList,
  ) {}

  has(key: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.table, key);
  }

  private raw(key: string): unknown {
    return this.has(key) ? this.table[key] : undefined;
  }

  private where(key: string): string {
    return formatPath([...this.path, key]);
  }

  fail(key: string, message: string, at: 'key' | 'value' = 'value'): void {
    this.issues.add([...this.path, key], message, at);
  }

  /** Reports every key not in `known`, with the closest known one for a near miss. */
  unknownKeys(known: readonly string[], what: string): void {
    for (const key of Object.keys(this.table)) {
      if (known.includes(key)) continue;
      const guess = closest(key, known);
      const shown = JSON.stringify(truncate(key));
      this.fail(
        key,
        `${shown} is not a key of ${what}${guess ? ` (did you mean ${guess}?)` : ''}; known keys: ${known.join(', ')}`,
        'key',
      );
    }
  }

  string(key: string, required: string | null): string | undefined {
    const value = this.raw(key);
    if (value === undefined) {
      if (required !== null) this.fail(key, `${this.where(key)} is missing; ${required}`);
      return undefined;
    }
    if (typeof value !== 'string') {
      this.fail(key, `${this.where(key)} must be a string, got ${describeValue(value)}; put the value in double quotes`);
      return undefined;
    }
    const problem = stringProblem(value);
    if (problem) {
      this.fail(key, `${this.where(key)} ${problem}`);
      return undefined;
    }
    return value;
  }

  bool(key: string, fallback: boolean): boolean | undefined {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    if (typeof value === 'boolean') return value;
    this.fail(key, `${this.where(key)} must be true or false (without quotes), got ${describeValue(value)}`);
    return undefined;
  }

  /** A number within `rule`; `fallback` when the key is absent (null: absent stays null). */
  number(key: string, rule: NumberRule, fallback: number): number | undefined;
  number(key: string, rule: NumberRule, fallback: null): number | null | undefined;
  number(key: string, rule: NumberRule, fallback: number | null): number | null | undefined {
    const value = this.raw(key);
    if (value === undefined) return fallback;
    const kind = rule.integer ? 'a whole number' : 'a number';
    const range = rule.max === undefined ? `≥ ${rule.min}` : `from ${rule.min} to ${rule.max}`;
    const why = rule.why ? ` (${rule.why})` : '';
    if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
      this.fail(key, `${this.where(key)} must be ${kind}, got a string (${JSON.stringify(truncate(value))}); write it without quotes`);
      return undefined;
    }
    if (typeof value !== 'number' && typeof value !== 'bigint') {
      this.fail(key, `${this.where(key)} must be ${kind} ${range}, got ${describeValue(value)}`);
      return undefined;
    }
    const n = Number(value);
    if (typeof value === 'bigint' || !Number.isFinite(n) || n < rule.min || (rule.max !== undefined && n > rule.max)) {
      this.fail(key, `${this.where(key)} must be ${kind} ${range}${why}, got ${describeValue(value)}`);
      return undefined;
    }
    if (rule.integer && !Number.isInteger(n)) {
      this.fail(key, `${this.where(key)} must be ${kind} ${range}, got ${describeValue(value)}; drop the fraction`);
      return undefined;
    }
    return n;
  }

  /**
   * A list of strings, null when absent; `check` may name a problem with one element. An element's problem
   * is located at the list (see toml-positions.ts) and names the element's index. `allowControl`: program
   * arguments may hold tabs and line breaks (only NUL is refused).
   */
  stringList(key: string, options: { allowControl?: boolean; check?: (item: string) => string | null } = {}): string[] | null | undefined {
    const value = this.raw(key);
    if (value === undefined) return null;
    if (!Array.isArray(value)) {
      this.fail(key, `${this.where(key)} must be a list of strings like ["a", "b"], got ${describeValue(value)}`);
      return undefined;
    }
    let ok = true;
    value.forEach((item: unknown, index) => {
      const at = `${this.where(key)}[${index}]`;
      let problem: string | null;
      if (typeof item !== 'string') problem = `must be a string, got ${describeValue(item)}; put it in double quotes`;
      else problem = stringProblem(item, options.allowControl) ?? (options.check ? options.check(item) : null);
      if (problem) {
        ok = false;
        this.issues.add([...this.path, key, index], `${at} ${problem}`);
      }
    });
    return ok ? (value as string[]) : undefined;
  }
}
