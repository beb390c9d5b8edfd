/**
 * Hostile and broken manifests: each ends in clear errors (at the right place where one is known), never a
 * throw, never a polluted prototype, and quickly. The time bound is loose for a shared 2-core box.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_MANIFEST_BYTES, MAX_MANIFEST_ERRORS, MAX_MANIFEST_JOBS, parseManifest } from '../../../src-main/core/jobs/manifest/index';
import type { ManifestParseResult } from '../../../src-shared/jobs/types';
import { JOB, errorLines, parseErrors, parseOk } from './manifest-helpers';

const LOOSE_MS = 3000;

function timed(text: string): ManifestParseResult {
  const started = performance.now();
  const result = parseManifest(text, 'sweep.toml');
  expect(performance.now() - started).toBeLessThan(LOOSE_MS);
  return result;
}

function jobsText(count: number): string {
  let text = '';
  for (let i = 0; i < count; i++) text += `[[jobs]]\nname = "j${i}"\ncommand = ["x"]\nseed = ${i}\n`;
  return text;
}

describe('limits', () => {
  it('refuses text over 4 MiB, counting UTF-8 bytes', () => {
    const big = timed(`# ${'x'.repeat(MAX_MANIFEST_BYTES)}\n`);
    expect(big.ok).toBe(false);
    const [error] = big.ok ? [] : big.errors;
    expect(error!.message).toMatch(/^sweep\.toml is larger than 4 MiB; .* check that this is the right file$/);
    expect(error!.line).toBeNull();
    const wide = `# ${'é'.repeat(MAX_MANIFEST_BYTES / 2)}\n${'[[jobs]]\n'}${JOB}`;
    expect(wide.length).toBeLessThan(MAX_MANIFEST_BYTES);
    expect(parseErrors(wide)[0]!.message).toMatch(/larger than 4 MiB/);
  });

  it('accepts 10,000 jobs and refuses 10,001 with one clear error', () => {
    expect(parseOk(jobsText(MAX_MANIFEST_JOBS)).jobs).toHaveLength(MAX_MANIFEST_JOBS);
    const result = timed(jobsText(MAX_MANIFEST_JOBS + 1));
    expect(result.ok ? [] : result.errors.map((e) => e.message)).toEqual([
      'sweep.toml has 10001 jobs; at most 10000 fit in one manifest — drop some points of the sweep',
    ]);
  });

  it('refuses strings over 4 KiB, in values, list elements and hyper keys', () => {
    const long = 'x'.repeat(4097);
    expect(errorLines(`[[jobs]]\nname = "${long}"\ncommand = ["${long}"]\n[jobs.hyper]\n${long} = "${long}"\n`)).toEqual([
      '2:8 jobs[0].name is longer than 4096 bytes; shorten it',
      '3:11 jobs[0].command[0] is longer than 4096 bytes; shorten it',
      `5:1 jobs[0].hyper key "${'x'.repeat(40)}" is longer than 4096 bytes; shorten it`,
    ]);
    expect(parseOk(`[[jobs]]\nname = "a"\ncommand = ["${'x'.repeat(4096)}"]\n`).jobs[0]!.command[0]).toHaveLength(4096);
  });

  it('lists at most 100 errors and says how many more there were', () => {
    const text = Array.from({ length: 300 }, (_, i) => `[[jobs]]\nname = "j${i}"\ncommand = ["x"]\nseed = -${i + 1}\n`).join('');
    const errors = parseErrors(text);
    expect(errors).toHaveLength(MAX_MANIFEST_ERRORS + 1);
    expect(errors[0]!.line).toBe(4);
    expect(errors.at(-1)).toEqual({ message: '… and 200 more errors; fix the ones above and submit again', line: null, col: null, path: [] });
  });

  it('refuses hyper too large for one environment variable', () => {
    const keys = Array.from({ length: 20 }, (_, i) => `k${i} = "${'v'.repeat(4000)}"`).join('\n');
    expect(errorLines(`[[jobs]]\n${JOB}[jobs.hyper]\n${keys}\n`)).toEqual([
      '4:1 jobs[0].hyper is over 64 KiB as JSON; the job gets it in one environment variable (GPU_SHARE_HYPER) — pass large settings in a file instead',
    ]);
  });
});

describe('hostile input', () => {
  it('a NUL byte means a binary file: one error at its place', () => {
    expect(errorLines(`[[jobs]]\nname = "a\u0000b"\n`)).toEqual([
      '2:10 sweep.toml contains a NUL byte, so it is a binary file (or UTF-16), not TOML text; pick the manifest itself, saved as UTF-8',
    ]);
    const escaped = errorLines('[[jobs]]\nname = "a\\u0000b"\ncommand = ["x\\u0000"]\n');
    expect(escaped).toEqual([
      '2:8 jobs[0].name contains a control character (a line break, tab or NUL); remove it',
      '3:11 jobs[0].command[0] contains a NUL character, which no program argument can hold; remove it',
    ]);
  });

  it('deep nesting: inline brackets, dotted keys and headers stop early with a place', () => {
    const brackets = parseErrors(`a = ${'['.repeat(100_000)}`)[0]!;
    expect(brackets.message).toMatch(/^sweep\.toml is not valid TOML: .*nested.*; nothing in a manifest nests deeper than 16 levels$/);
    expect(brackets.line).toBe(1);
    const dotted = timed(`${Array(2_000_000).fill('a').join('.')} = 1\n`);
    const header = timed(`[[jobs]]\n${JOB}[${Array(500_000).fill('a').join('.')}]\n`);
    for (const [result, line] of [[dotted, 1], [header, 4]] as const) {
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.errors[0]!.message).toMatch(/a key here has more than 8 dotted parts/);
      expect(result.errors[0]!.line).toBe(line);
    }
  });

  it('wrong types everywhere: one error per field, no throw', () => {
    const fields = ['name', 'command', 'model', 'mode', 'hyper', 'seed', 'require_cuda', 'prefer_cuda', 'min_vram_gib', 'min_ram_gib', 'min_cores', 'allowed_hosts', 'max_attempts', 'data_mb', 'mflops'];
    const values = ['{ a = 1 }', '1979-05-27', '[[1]]', 'inf', '-nan', '99999999999999999999', '"x"', 'true', '-1', '[]'];
    for (const value of values) {
      const text = `placement = ${value}\n[[jobs]]\n${fields.map((f) => `${f} = ${value}`).join('\n')}\n[[hosts]]\nname = ${value}\nallow_jobs = ${value}\ndeny_jobs = ${value}\n`;
      const result = timed(text);
      expect(result.ok, value).toBe(false);
      if (result.ok) continue;
      for (const error of result.errors) expect(error.line, `${value}: ${error.message}`).not.toBeNull();
    }
  });

  it('__proto__ and constructor keys are reported, never assigned', () => {
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    const lines = errorLines(`__proto__ = { polluted = 1 }\n[constructor]\nprototype = { polluted = 2 }\n[[jobs]]\n${JOB}__proto__ = { polluted = 3 }\n`);
    expect(lines.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(['1:1 "__proto__"', '2:1 "constructor"', '7:1 "__proto__"']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(before);
  });

  it('binary-looking junk, lone quotes and unterminated strings end in a TOML error with a place', () => {
    for (const junk of ['PK\u0003\u0004\u0014\u0000', '"""', "'''\n", 'a = "unterminated', '[[jobs', ']]]', '= 1', '\uFEFF\uFFFE', 'a = [1,\n# c\n', '\r\r\r']) {
      const result = timed(junk);
      expect(result.ok, JSON.stringify(junk)).toBe(false);
    }
  });

  it('never throws on arbitrary text (property)', () => {
    const tomlish = fc
      .array(
        fc.constantFrom('[[jobs]]\n', '[jobs.hyper]\n', 'name = "a"\n', 'command = ["x"]\n', '"', "'", '[', ']', '{', '}', '=', '.', '#', '\n', ' ', 'a', '1', '\\', '"""', 'seed = ', 'hyper.', '\u0000', 'é'),
        { maxLength: 60 },
      )
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), tomlish), (text) => {
        const result = parseManifest(text, 'f.toml');
        if (!result.ok) {
          expect(result.errors.length).toBeGreaterThan(0);
          for (const e of result.errors) expect(typeof e.message).toBe('string');
        }
      }),
      { numRuns: 2000 },
    );
  });
});
