/**
 * Runs N claimer processes (test/integration/jobs-claim-child.ts, bundled) against one state.db at once: all
 * start, open the file and say ready, then get `go` together and claim until the queue is empty. Used by the
 * claim-race test and bench/jobs-claim.ts.
 */
import { spawn } from 'node:child_process';

export interface ClaimerResult {
  workerId: number;
  /** Ids of the jobs this process claimed, in order. */
  ids: string[];
  /** When it found the queue empty (epoch ms). */
  finishedAt: number;
}

interface Claimer {
  workerId: number;
  ready: Promise<void>;
  done: Promise<ClaimerResult>;
  go(): void;
}

function startClaimer(bundle: string, dir: string, workerId: number): Claimer {
  const child = spawn(process.execPath, [bundle, dir, String(workerId)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    if (out.startsWith('ready\n')) markReady();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const done = new Promise<ClaimerResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      const lines = out.split('\n');
      const last = lines.filter((l) => l.startsWith('done ')).at(-1);
      if (code !== 0 || !last) return reject(new Error(`claimer ${workerId} ended with ${code ?? signal} before it was done:\n${err}`));
      const ids = lines.filter((l) => l.startsWith('claimed ')).map((l) => l.slice('claimed '.length));
      resolve({ workerId, ids, finishedAt: Number(last.slice('done '.length)) });
    });
  });
  // An early exit must end the wait for `ready` too.
  const readyOrFailed = Promise.race([ready, done.then(() => undefined)]);
  return { workerId, ready: readyOrFailed, done, go: () => child.stdin.end('go\n') };
}

/** Starts `count` claimers (worker ids 1…count), releases them together, and waits for all. */
export async function runClaimers(bundle: string, dir: string, count: number): Promise<{ results: ClaimerResult[]; startedAt: number; wallMs: number }> {
  const claimers = Array.from({ length: count }, (_, i) => startClaimer(bundle, dir, i + 1));
  await Promise.all(claimers.map((c) => c.ready));
  const startedAt = Date.now();
  for (const c of claimers) c.go();
  const results = await Promise.all(claimers.map((c) => c.done));
  return { results, startedAt, wallMs: Math.max(...results.map((r) => r.finishedAt)) - startedAt };
}

/** Ids claimed by more than one process, or more than once by one. */
export function doubleClaims(results: ClaimerResult[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const id of results.flatMap((r) => r.ids)) (seen.has(id) ? twice : seen).add(id);
  return [...twice];
}
