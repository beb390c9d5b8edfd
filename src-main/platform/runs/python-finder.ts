/**
 * Finds the Python interpreter that can import torch. The first `python3` on PATH is often a pyenv or venv
 * interpreter without torch while the system one has it, so each candidate is asked directly instead of
 * trusting PATH order; GPU_SHARE_PYTHON lets the user name one outright.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

export interface PythonWithTorch {
  path: string;
  torchVersion: string;
}

export interface PythonProbeResult {
  found: PythonWithTorch | null;
  /** One line per candidate tried, saying why it was not used; for error messages and logs. */
  tried: string[];
}

/** `import torch` takes 1–2 s on a quiet machine and well over 20 s on a busy one (a laptop at login, a build). */
const PROBE_TIMEOUT_MS = 60_000;
const TIMED_OUT = 'no answer within';
/** Debian's python3-torch installs torch for this interpreter only. */
export const SYSTEM_PYTHON = '/usr/bin/python3';

/** Resolves `name` against PATH the way a shell would; null when nothing executable is there. */
export function whichOnPath(name: string, pathVar: string | undefined): string | null {
  if (name.includes('/')) return name;
  for (const dir of (pathVar ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; keep looking.
    }
  }
  return null;
}

/** Asks one interpreter for torch's version; the reason it failed otherwise. */
export function probeTorch(python: string, env: NodeJS.ProcessEnv = process.env): Promise<{ torchVersion: string } | { error: string }> {
  return new Promise((resolve) => {
    execFile(
      python,
      ['-c', 'import torch; print(torch.__version__)'],
      { timeout: PROBE_TIMEOUT_MS, env: { ...env, PYTHONWARNINGS: 'ignore' }, windowsHide: true },
      (error, stdout, stderr) => {
        if (error) {
          const lastLine = String(stderr).trim().split('\n').pop() ?? '';
          const why = (error as NodeJS.ErrnoException).code === 'ENOENT'
            ? 'not found'
            : error.killed
              ? `${TIMED_OUT} ${PROBE_TIMEOUT_MS / 1000} s`
              : lastLine || error.message;
          resolve({ error: why });
          return;
        }
        const version = String(stdout).trim().split('\n').pop()?.trim() ?? '';
        resolve(version ? { torchVersion: version } : { error: 'printed no torch version' });
      },
    );
  });
}

/** Candidate interpreters in the order they are tried; GPU_SHARE_PYTHON alone when set. */
export function pythonCandidates(env: NodeJS.ProcessEnv, systemPython = SYSTEM_PYTHON): string[] {
  const chosen = env.GPU_SHARE_PYTHON?.trim();
  if (chosen) return [chosen];
  const list = [systemPython];
  for (const name of ['python3', 'python']) {
    const found = whichOnPath(name, env.PATH);
    if (found) list.push(found);
  }
  return [...new Set(list)];
}

/** Tries each candidate and says why each one was passed over. */
export async function probePythons(env: NodeJS.ProcessEnv = process.env, systemPython = SYSTEM_PYTHON): Promise<PythonProbeResult> {
  const tried: string[] = [];
  for (const candidate of pythonCandidates(env, systemPython)) {
    const answer = await probeTorch(candidate, env);
    if ('torchVersion' in answer) return { found: { path: candidate, torchVersion: answer.torchVersion }, tried };
    const source = env.GPU_SHARE_PYTHON?.trim() ? ' (from GPU_SHARE_PYTHON)' : '';
    tried.push(`${candidate}${source}: ${answer.error}`);
  }
  return { found: null, tried };
}

const cache = new Map<string, Promise<PythonProbeResult>>();

/** Explains a failed search in one message a person can act on. */
export function describeNoPython(result: PythonProbeResult, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = env.GPU_SHARE_PYTHON?.trim();
  const head = chosen
    ? `GPU_SHARE_PYTHON=${chosen} cannot import torch`
    : 'no Python interpreter with PyTorch was found';
  const fix = chosen
    ? 'Install torch for that interpreter, or point GPU_SHARE_PYTHON at one that has it.'
    : 'Install PyTorch (e.g. `pip install torch`, or Debian\'s python3-torch), or set GPU_SHARE_PYTHON to an interpreter that has it.';
  return `${head}. Tried: ${result.tried.join('; ') || 'nothing'}. ${fix}`;
}

/**
 * The first interpreter that imports torch, with torch's version, or null. Cached per PATH and
 * GPU_SHARE_PYTHON because importing torch takes seconds; `probePythons` gives the reasons when it is null.
 */
export async function findPython(env: NodeJS.ProcessEnv = process.env): Promise<PythonWithTorch | null> {
  return (await findPythonDetailed(env)).found;
}

/** Like findPython, with the reason for every candidate passed over. */
export function findPythonDetailed(env: NodeJS.ProcessEnv = process.env): Promise<PythonProbeResult> {
  const key = `${env.GPU_SHARE_PYTHON ?? ''}\0${env.PATH ?? ''}`;
  let pending = cache.get(key);
  if (!pending) {
    const probing = probePythons(env);
    pending = probing;
    cache.set(key, probing);
    // An answer that was only slow is not kept: the next ask tries again rather than "no torch" for good.
    void probing.then((r) => {
      if (!r.found && r.tried.some((t) => t.includes(TIMED_OUT)) && cache.get(key) === probing) cache.delete(key);
    });
  }
  return pending;
}

/** Forgets cached answers (after the user installs torch, or in tests). */
export function clearPythonCache(): void {
  cache.clear();
}
