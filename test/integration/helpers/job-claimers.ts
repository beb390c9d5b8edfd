/**
 * Queue processes racing on one state.db (the claim race, the kill -9 test, bench/jobs-claim.ts): each child
 * opens the file and prints `ready`, then all get `go` together. runClaimers runs jobs-claim-child.ts that way
 * until the queue is empty.
 */
import { spawn } from 'node:child_process';

export interface RacerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Complete lines it printed (a line cut off by a kill is dropped: it was never acknowledged). */
  lines: string[];
  stderr: string;
}

export interface Racer {
  /** Resolves once it printed `ready`; rejects if it ended before. */
  ready: Promise<void>;
  exited: Promise<RacerExit>;
  go(): void;
  kill(): void;
}

/** Starts `node bundle ...args`; it must print `ready` and then wait for a line on stdin. */
export function startRacer(bundle: string, args: string[]): Racer {
  const child = spawn(process.execPath, [bundle, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let stderr = '';
  let markReady: () => void = () => undefined;
  const readySeen = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    if (out.startsWith('ready\n')) markReady();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<RacerExit>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, lines: out.split('\n').slice(0, -1), stderr }));
  });
  const endedEarly = exited.then((e) => Promise.reject(new Error(`${args.join(' ')}: ended with ${e.code ?? e.signal} before it was ready:\n${e.stderr}`)));
  endedEarly.catch(() => undefined);
  return {
    ready: Promise.race([readySeen, endedEarly]),
    exited,
    go: () => child.stdin.end('go\n'),
    kill: () => child.kill('SIGKILL'),
  };
}

export interface ClaimerResult {
  workerId: number;
  /** Ids of the jobs this process claimed, in order. */
  ids: string[];
  /** When it found the queue empty (epoch ms). */
  finishedAt: number;
}

async function claimerResult(workerId: number, racer: Racer): Promise<ClaimerResult> {
  const { code, signal, lines, stderr } = await racer.exited;
  const done = lines.filter((l) => l.startsWith('done ')).at(-1);
  if (code !== 0 || !done) throw new Error(`claimer ${workerId} ended with ${code ?? signal} before it was done:\n${stderr}`);
  const ids = lines.filter((l) => l.startsWith('claimed ')).map((l) => l.slice('claimed '.length));
  return { workerId, ids, finishedAt: Number(done.slice('done '.length)) };
}

/** Starts `count` claimers (worker ids 1…count), releases them together, and waits for all. */
export async function runClaimers(bundle: string, dir: string, count: number): Promise<{ results: ClaimerResult[]; startedAt: number; wallMs: number }> {
  const racers = Array.from({ length: count }, (_, i) => startRacer(bundle, [dir, String(i + 1)]));
  await Promise.all(racers.map((r) => r.ready));
  const startedAt = Date.now();
  for (const r of racers) r.go();
  const results = await Promise.all(racers.map((r, i) => claimerResult(i + 1, r)));
  return { results, startedAt, wallMs: Math.max(...results.map((r) => r.finishedAt)) - startedAt };
}

/** Ids claimed by more than one process, or more than once by one. */
export function doubleClaims(results: ClaimerResult[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const id of results.flatMap((r) => r.ids)) (seen.has(id) ? twice : seen).add(id);
  return [...twice];
}
