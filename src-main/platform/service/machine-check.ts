/**
 * What this machine needs before it is installed as a worker, checked locally with the same thresholds the SSH
 * start checks a remote node with (core/ssh/remote-preflight.ts imports them from here): Node.js 20 or newer (the
 * program the service runs), a Python that imports torch (found as the agent finds it), and free disk where the
 * worker keeps its data. Reaching the coordinator and its proof is checked by the caller (it needs the agent's
 * client). Each problem is named with what fixes it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { findPythonDetailed, type PythonWithTorch } from '../runs/python-finder';

export const MIN_NODE_MAJOR = 20;
export const MIN_FREE_MB = 1024;

export interface MachineFacts {
  nodeVersion: string;
  python: PythonWithTorch | null;
  /** Why each Python tried was passed over. */
  pythonTried: string[];
  /** The folder checked for free space (the nearest existing one above the data folder), and what is free there. */
  diskDir: string;
  freeMb: number | null;
}

export interface MachineProblem {
  what: string;
  fix: string;
}

function nearestExisting(dir: string): string {
  let d = dir;
  while (!fs.existsSync(d) && path.dirname(d) !== d) d = path.dirname(d);
  return d;
}

export async function gatherMachineFacts(env: NodeJS.ProcessEnv, dataDir: string, nodeVersion = process.versions.node): Promise<MachineFacts> {
  const probe = await findPythonDetailed(env);
  const diskDir = nearestExisting(dataDir);
  let freeMb: number | null = null;
  try {
    const s = fs.statfsSync(diskDir);
    freeMb = Math.floor((s.bavail * s.bsize) / (1024 * 1024));
  } catch {
    freeMb = null; // not measurable here: not a reason to refuse
  }
  return { nodeVersion, python: probe.found, pythonTried: probe.tried, diskDir, freeMb };
}

export function machineProblems(f: MachineFacts, env: NodeJS.ProcessEnv): MachineProblem[] {
  const problems: MachineProblem[] = [];
  if (!(Number.parseInt(f.nodeVersion, 10) >= MIN_NODE_MAJOR)) {
    problems.push({ what: `Node.js ${f.nodeVersion || '(unknown version)'} runs this command; the worker needs ${MIN_NODE_MAJOR} or newer`, fix: `install Node.js ${MIN_NODE_MAJOR}+ (nodejs.org, or nvm install ${MIN_NODE_MAJOR}) and run the install with it` });
  }
  if (!f.python) {
    const chosen = env.GPU_SHARE_PYTHON;
    problems.push({
      what: chosen ? `GPU_SHARE_PYTHON=${chosen} cannot import torch` : 'no Python with PyTorch was found',
      fix: `install PyTorch (\`pip install torch\`, or Debian's python3-torch) or set GPU_SHARE_PYTHON to an interpreter that has it (tried: ${f.pythonTried.join('; ') || 'nothing'})`,
    });
  }
  if (f.freeMb !== null && f.freeMb < MIN_FREE_MB) {
    problems.push({ what: `only ${f.freeMb} MB free in ${f.diskDir} (at least ${MIN_FREE_MB} MB needed for the agent and checkpoints)`, fix: `free space in ${f.diskDir}` });
  }
  return problems;
}
