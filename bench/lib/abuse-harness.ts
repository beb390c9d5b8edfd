/**
 * What the abuse benches share (bench/abuse-*.ts): memory figures of this process (the coordinator's), an
 * attacker run in a process of its own (bench/lib/abuse-client.ts or abuse-attacker.ts) while this one's peak
 * RSS is sampled, "run main() when started as this file" for benches that are also modules, and the disguise
 * that makes joins from 127.0.0.x look like a LAN's.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { CoordinatorService } from '../../src-main/core/coordinator/service/coordinator-service';

export const MB = 1024 * 1024;

export function rssMb(): number {
  return process.memoryUsage().rss / MB;
}

/** Heap still held after two full collections (needs node --expose-gc). */
export function heldMb(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc so held memory can be measured');
  gc();
  gc();
  return process.memoryUsage().heapUsed / MB;
}

/** Collects garbage when allowed (node --expose-gc), so RSS-after figures are not just uncollected garbage. */
export function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
}

export interface AttackResult {
  result: Record<string, number>;
  peakRssMb: number;
  seconds: number;
}

/** Runs `script` (a TypeScript file) with `args` in a child process to its end, sampling this process's RSS; its last JSON line. */
export function runAttacker(script: string, args: string[]): Promise<AttackResult> {
  const t0 = performance.now();
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const child = spawn(process.execPath, ['scripts/run-ts.mjs', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      clearInterval(sampler);
      if (code !== 0) reject(new Error(`${script} exited with ${code}`));
      else resolve({ result: JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, number>, peakRssMb: peak / MB, seconds: (performance.now() - t0) / 1000 });
    });
  });
}

/** "12 × 202, 3 × 429" from an attacker's counts by status (keys http<status>; 0: no answer). */
export function answered(result: Record<string, number>): string {
  return Object.entries(result)
    .filter(([k]) => k.startsWith('http'))
    .map(([k, n]) => `${n} × ${k === 'http0' ? 'no answer' : k.slice(4)}`)
    .join(', ');
}

/** True when this process was started to run `file` itself (scripts/run-ts.mjs sets argv[1] to the entry). */
export function startedAs(file: string): boolean {
  return (process.argv[1] ?? '').endsWith(`/bench/${file}`);
}

/** Runs a bench's main and exits non-zero with the error on failure. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

/**
 * The attackers of these benches connect from 127.0.0.0/8 (traffic stays on this machine), but the coordinator
 * approves a join from its own machine by construction. This shows the key check every such address as one
 * in 192.0.2.0/24 (reserved for documentation), so the joins are treated as a LAN machine's. Only
 * `exceptFrom` (the honest worker's address) is shown as it is.
 */
export function joinsLookLikeLan(svc: CoordinatorService, exceptFrom = '127.0.0.1'): void {
  const keys = svc.nodeKeys as unknown as { checkJoin: (join: unknown, conn: { seenFrom: string }, request: unknown) => unknown };
  const check = keys.checkJoin.bind(svc.nodeKeys);
  keys.checkJoin = (join, conn, request) => {
    const from = conn.seenFrom.replace(/^::ffff:/, '');
    return check(join, from === exceptFrom ? conn : { ...conn, seenFrom: from.replace(/^127\.\d+\.\d+\./, '192.0.2.') }, request);
  };
}
