/**
 * What a node needs before a worker can start there: Node.js ≥ 20 (the agent), Python with PyTorch (training),
 * setsid (so the agent outlives the SSH session) and free disk in the home folder. One shell script gathers the
 * facts; each missing thing is named with the command that fixes it.
 */
import type { SshSession } from './ssh-session';
import { MIN_FREE_MB, MIN_NODE_MAJOR } from '../../platform/service/machine-check';

// The same thresholds `gpu-share worker install` checks this machine against (platform/service/machine-check.ts).
export { MIN_FREE_MB, MIN_NODE_MAJOR };

export interface RemoteFacts {
  home: string;
  node: string;
  nodeVersion: string;
  python: string;
  torch: string;
  setsid: string;
  freeMb: number | null;
}

export interface PreflightProblem {
  what: string;
  fix: string;
}

/** key=value lines; GPU_SHARE_PYTHON on the node wins over python3, as it does for the agent. */
export const PREFLIGHT_SCRIPT = [
  'echo "home=$HOME"',
  'n=$(command -v node); echo "node=$n"',
  '[ -n "$n" ] && echo "node_version=$("$n" -p process.versions.node 2>/dev/null)"',
  'py="${GPU_SHARE_PYTHON:-$(command -v python3)}"; echo "python=$py"',
  '[ -n "$py" ] && echo "torch=$("$py" -c "import torch; print(torch.__version__)" 2>/dev/null)"',
  'echo "setsid=$(command -v setsid)"',
  'echo "free_kb=$(df -Pk "$HOME" 2>/dev/null | awk \'NR==2 {print $4}\')"',
].join('\n');

export function parseFacts(output: string): RemoteFacts {
  const values = new Map<string, string>();
  for (const line of output.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) values.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  const kb = Number.parseInt(values.get('free_kb') ?? '', 10);
  return {
    home: values.get('home') ?? '',
    node: values.get('node') ?? '',
    nodeVersion: values.get('node_version') ?? '',
    python: values.get('python') ?? '',
    torch: values.get('torch') ?? '',
    setsid: values.get('setsid') ?? '',
    freeMb: Number.isFinite(kb) ? Math.floor(kb / 1024) : null,
  };
}

export function preflightProblems(f: RemoteFacts): PreflightProblem[] {
  const problems: PreflightProblem[] = [];
  const nodeFix = 'install Node.js 20 or newer: `curl -fsSL https://deb.nodesource.com/setup_20.x | sudo -E bash - && sudo apt-get install -y nodejs` (or nvm install 20)';
  if (!f.home) problems.push({ what: 'the login has no HOME', fix: 'give the user a home folder (usermod -d)' });
  if (!f.node) problems.push({ what: 'Node.js is not on the PATH of a non-interactive SSH login', fix: nodeFix });
  else if (Number.parseInt(f.nodeVersion, 10) < MIN_NODE_MAJOR || !f.nodeVersion) {
    problems.push({ what: `Node.js ${f.nodeVersion || '(unknown version)'} at ${f.node} is older than ${MIN_NODE_MAJOR}`, fix: nodeFix });
  }
  if (!f.python) problems.push({ what: 'Python 3 is not on the PATH (nor GPU_SHARE_PYTHON set)', fix: '`sudo apt-get install python3 python3-torch`' });
  else if (!f.torch) problems.push({ what: `${f.python} cannot import torch`, fix: `\`sudo apt-get install python3-torch\` or \`${f.python} -m pip install torch\`` });
  if (!f.setsid) problems.push({ what: 'setsid is missing', fix: '`sudo apt-get install util-linux`' });
  if (f.freeMb !== null && f.freeMb < MIN_FREE_MB) {
    problems.push({ what: `only ${f.freeMb} MB free in ${f.home} (at least ${MIN_FREE_MB} MB needed for the agent and checkpoints)`, fix: `free space in ${f.home}` });
  }
  return problems;
}

export function describeProblems(label: string, problems: PreflightProblem[]): string {
  return `${label} is not ready for a worker:\n${problems.map((p) => `  - ${p.what}: ${p.fix}`).join('\n')}`;
}

export async function checkRemote(session: SshSession): Promise<{ facts: RemoteFacts; problems: PreflightProblem[] }> {
  const result = await session.exec('sh -s', { stdin: PREFLIGHT_SCRIPT, timeoutMs: 60_000 });
  const facts = parseFacts(result.stdout);
  return { facts, problems: preflightProblems(facts) };
}
