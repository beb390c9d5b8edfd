/**
 * Whether this machine's Python (the one the agent trains with) can import what a project needs, asked in one
 * short subprocess before the member is given a generation: a missing module then holds the member out with a
 * reason a person can act on, instead of every rank dying at its first import. Nothing is installed.
 */
import { execFile } from 'node:child_process';
import type { PythonModuleCheck } from '../../../src-shared/projects/project-protocol';

export const MODULE_CHECK_TIMEOUT_MS = 60_000;

/** Imports each module named in argv[1] (JSON) and prints those that failed, with why, as JSON. */
const CHECK_SCRIPT = [
  'import importlib, json, sys',
  'bad = []',
  'for name in json.loads(sys.argv[1]):',
  '    try:',
  '        importlib.import_module(name)',
  '    except BaseException as e:',
  '        bad.append([name, type(e).__name__ + ": " + str(e)[:200]])',
  'sys.stdout.write("\\n" + json.dumps(bad) + "\\n")',
].join('\n');

export type ModuleCheckResult = { ok: true } | { ok: false; detail: string; failed: { module: string; source: string; why: string }[] };

/** One failure as the reason reads: `'sentencepiece' (requirements.txt line 3)`. */
function named(check: { module: string; source: string }): string {
  return check.source ? `'${check.module}' (${check.source})` : `'${check.module}'`;
}

export function checkModules(
  python: string,
  checks: readonly PythonModuleCheck[],
  opts: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<ModuleCheckResult> {
  if (checks.length === 0) return Promise.resolve({ ok: true });
  const modules = [...new Set(checks.map((c) => c.module))];
  const timeoutMs = opts.timeoutMs ?? MODULE_CHECK_TIMEOUT_MS;
  return new Promise((resolve) => {
    execFile(
      python,
      ['-c', CHECK_SCRIPT, JSON.stringify(modules)],
      { cwd: opts.cwd, env: { ...opts.env, PYTHONWARNINGS: 'ignore', PYTHONDONTWRITEBYTECODE: '1' }, timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024, windowsHide: true },
      (error, stdout, stderr) => {
        const last = String(stdout).trim().split('\n').pop() ?? '';
        let bad: [string, string][] | null = null;
        try {
          bad = JSON.parse(last) as [string, string][];
        } catch {
          bad = null;
        }
        if (!Array.isArray(bad)) {
          const why = error?.killed ? `no answer within ${timeoutMs / 1000} s` : (String(stderr).trim().split('\n').pop() ?? error?.message ?? 'no answer');
          resolve({ ok: false, detail: `could not check the project's modules with ${python}: ${why}`, failed: [] });
          return;
        }
        if (bad.length === 0) return resolve({ ok: true });
        const why = new Map(bad);
        const failed = checks.filter((c) => why.has(c.module)).map((c) => ({ ...c, why: why.get(c.module)! }));
        resolve({ ok: false, detail: `python cannot import ${failed.map(named).join(', ')}`, failed });
      },
    );
  });
}
