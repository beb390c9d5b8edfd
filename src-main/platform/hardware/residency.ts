/**
 * The GPU residency probe: positive proof, from the driver, that a training process really holds GPU memory.
 *
 * The rule is entrenar's (INV-GPUTRAIN-003): read `nvidia-smi --query-compute-apps=pid,used_memory
 * --format=csv,noheader,nounits`; Pass iff a row has our pid with at least 1 MiB, probed within 5 s of step 0.
 * The parser is strict on purpose — anything it does not understand is a parse failure, and a parse failure
 * is Fail: a run must never be called GPU-resident on evidence we could not read.
 *
 * Which pids are "ours": the pid asked about AND all its descendants. Under torchrun the agent knows the
 * launcher's pid, but the process that calls cudaMalloc is a worker the launcher forked (and re-forks on every
 * restart), so nvidia-smi lists the child, never the launcher; asking only about the launcher would fail every
 * healthy torchrun run. Counting descendants keeps the rule's protection against the wrong pid: a process
 * outside our tree (another user's job, a stale run) still does not count, and an unrelated process cannot
 * become our descendant (orphans are re-parented to init or a subreaper, never into our tree). Descendants are
 * re-read from /proc at every poll because workers start after the launcher; callers may also pass pids they
 * know (`childPids`), which is how it works where there is no /proc.
 */
import { descendantPids } from './process-tree';
import { runNvidiaSmi, type NvidiaSmiResult } from './nvidia-smi';

/** Seconds after step 0 within which the probe must find the process (entrenar's constant). */
export const POLL_WINDOW_SECONDS = 5;
/** Least GPU memory that counts as resident: 0 MiB means registered with the driver but allocated nothing. */
export const MIN_USED_MIB = 1;
/** How often the probe asks nvidia-smi again within the window. */
export const DEFAULT_POLL_INTERVAL_MS = 500;

export const COMPUTE_APPS_ARGS = ['--query-compute-apps=pid,used_memory', '--format=csv,noheader,nounits'];

export interface ComputeApp {
  pid: number;
  /** MiB; values beyond 2^53 keep their magnitude but not every digit (only ≥ 1 matters). */
  usedMib: number;
}

export type ComputeAppsParse = { ok: true; apps: ComputeApp[] } | { ok: false; lineNumber: number; line: string };

const U32_MAX = 4_294_967_295;
const U64_MAX = 18_446_744_073_709_551_615n;

/** Like parseComputeApps, but says which line failed, for the verdict's detail. */
export function parseComputeAppsDetailed(text: string): ComputeAppsParse {
  const apps: ComputeApp[] = [];
  // Lines end in \n or \r\n (Rust's str::lines, which the rule was written against); only empty lines are skipped.
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line === '') continue;
    const sep = line.indexOf(', ');
    if (sep === -1) return { ok: false, lineNumber: i + 1, line };
    const pidText = line.slice(0, sep);
    const memText = line.slice(sep + 2);
    if (!/^\d+$/.test(pidText) || !/^\d+$/.test(memText)) return { ok: false, lineNumber: i + 1, line };
    const pid = Number(pidText);
    if (pidText.length > 10 || pid > U32_MAX) return { ok: false, lineNumber: i + 1, line };
    if (memText.length > 20 || BigInt(memText) > U64_MAX) return { ok: false, lineNumber: i + 1, line };
    apps.push({ pid, usedMib: Number(memText) });
  }
  return { ok: true, apps };
}

/**
 * Strict parser of `--query-compute-apps=pid,used_memory --format=csv,noheader,nounits`: each non-empty line is
 * `<digits>, <digits>` (exactly comma-space), pid within u32, MiB within u64. Anything else → null (parse failure).
 * Digits only, as the rule's text says: Rust's integer parse behind the seed would also take a leading `+`, which
 * nvidia-smi never prints, so we refuse it rather than widen the rule.
 */
export function parseComputeApps(text: string): ComputeApp[] | null {
  const parsed = parseComputeAppsDetailed(text);
  return parsed.ok ? parsed.apps : null;
}

/** Pass iff some row has `pid` with at least MIN_USED_MIB; no rows, or a parse failure (null), is Fail. */
export function residencyVerdict(pid: number, apps: ComputeApp[] | null): 'pass' | 'fail' {
  if (apps === null) return 'fail';
  return apps.some((app) => app.pid === pid && app.usedMib >= MIN_USED_MIB) ? 'pass' : 'fail';
}

export interface ResidencyResult {
  status: 'pass' | 'fail';
  detail: string;
  /** The pid found resident (the launcher or one of its descendants), else the pid asked about. */
  pid: number;
  /** MiB the resident pid holds (all its rows, e.g. on several GPUs); 0 when listed with nothing; null when not listed. */
  usedMib: number | null;
}

/** The verdict and its sentence for one nvidia-smi answer; `pid` is the one asked about, `others` its descendants. */
export function judgeResidency(pid: number, others: number[], parsed: ComputeAppsParse): ResidencyResult {
  if (!parsed.ok) {
    const shown = parsed.line.length > 120 ? `${parsed.line.slice(0, 119)}…` : parsed.line;
    return {
      status: 'fail',
      detail: `NOT on the GPU: nvidia-smi output could not be parsed: line ${parsed.lineNumber} "${shown}" is not "<pid>, <MiB>"`,
      pid,
      usedMib: null,
    };
  }
  const apps = parsed.apps;
  const ours = [pid, ...others.filter((p) => p !== pid)];
  const held = (p: number) => apps.filter((a) => a.pid === p).reduce((sum, a) => sum + a.usedMib, 0);
  const resident = ours.filter((p) => residencyVerdict(p, apps) === 'pass');
  if (resident.length > 0) {
    // Prefer the pid asked about; otherwise the descendant holding the most.
    const winner = resident.includes(pid) ? pid : resident.reduce((a, b) => (held(b) > held(a) ? b : a));
    const who = winner === pid ? `pid ${pid}` : `pid ${winner} (child of ${pid})`;
    return { status: 'pass', detail: `GPU resident: ${who} holds ${held(winner)} MiB`, pid: winner, usedMib: held(winner) };
  }
  const listed = ours.find((p) => apps.some((a) => a.pid === p));
  if (listed !== undefined) {
    return {
      status: 'fail',
      detail: `NOT on the GPU: pid ${listed} is listed by nvidia-smi with 0 MiB (registered with the driver, allocated nothing)`,
      pid: listed,
      usedMib: 0,
    };
  }
  const otherCount = new Set(apps.map((a) => a.pid)).size;
  const them = otherCount === 0 ? 'no process is' : otherCount === 1 ? '1 other process is' : `${otherCount} other processes are`;
  const kids = others.filter((p) => p !== pid).length;
  const subject = kids === 0 ? `pid ${pid} is` : `pid ${pid} and its ${kids} child process${kids === 1 ? '' : 'es'} are`;
  return { status: 'fail', detail: `NOT on the GPU: ${subject} not listed by nvidia-smi (${them})`, pid, usedMib: null };
}

export interface ProbeResidencyOptions {
  pid: number;
  /** Pids known to belong to the run (e.g. reported by the launcher); /proc descendants are added on Linux. */
  childPids?: number[];
  nvidiaSmiPath: string | null;
  /** Default POLL_WINDOW_SECONDS × 1000. */
  windowMs?: number;
  intervalMs?: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * Polls nvidia-smi until the process (or a descendant) is resident or the window ends; never throws. The last
 * answer decides the detail of a Fail. A missing nvidia-smi fails at once: waiting will not make it appear.
 */
export async function probeResidency(opts: ProbeResidencyOptions): Promise<ResidencyResult> {
  const windowMs = opts.windowMs ?? POLL_WINDOW_SECONDS * 1000;
  const intervalMs = Math.max(10, opts.intervalMs ?? DEFAULT_POLL_INTERVAL_MS);
  const deadline = performance.now() + windowMs;
  const fail = (detail: string): ResidencyResult => ({ status: 'fail', detail, pid: opts.pid, usedMib: null });
  if (opts.nvidiaSmiPath === null) return fail('NOT on the GPU: nvidia-smi not found');

  let last: ResidencyResult = fail(`NOT on the GPU: no answer from nvidia-smi within ${windowMs} ms`);
  for (;;) {
    const remaining = deadline - performance.now();
    const answer: NvidiaSmiResult = await runNvidiaSmi(opts.nvidiaSmiPath, COMPUTE_APPS_ARGS, {
      timeoutMs: Math.round(Math.min(5000, Math.max(500, remaining))),
      ...(opts.env ? { env: opts.env } : {}),
    });
    if (!answer.ok) {
      if (answer.failure === 'not-found' || answer.failure === 'not-executable') {
        return fail(`NOT on the GPU: ${answer.reason}`);
      }
      last = fail(`NOT on the GPU: ${answer.reason}`);
    } else {
      const others = [...new Set([...(opts.childPids ?? []), ...descendantPids(opts.pid)])];
      last = judgeResidency(opts.pid, others, parseComputeAppsDetailed(answer.stdout));
      if (last.status === 'pass') return last;
    }
    if (performance.now() + intervalMs > deadline) return last;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
