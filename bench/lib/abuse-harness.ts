/**
 * What the abuse benches share (bench/abuse-*.ts): memory figures of this process (the coordinator's), an
 * attacker run in a process of its own (bench/lib/abuse-client.ts or abuse-attacker.ts) while this one's peak
 * RSS is sampled, and "run main() when started as this file" for benches that are also modules.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

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
