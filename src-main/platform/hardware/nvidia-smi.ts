/**
 * Runs nvidia-smi and turns every way it can fail into a sentence a person can act on. Nothing here throws:
 * a machine without a working NVIDIA driver is a normal machine, not an error.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { DetectedGpu, NvidiaStatus } from '../../../src-shared/hardware';
import { NVIDIA_SMI_ENV } from './locate-nvidia-smi';
import { gpuTypeSlug, isUnifiedNvidiaName } from './gpu-slug';
import { parseQueryGpuCsv, queryGpuArgs, QUERY_GPU_FIELDS, type ParsedGpuRow } from './query-gpu-csv';

export const NVIDIA_SMI_TIMEOUT_MS = 5000;

export type NvidiaSmiFailure = 'not-found' | 'not-executable' | 'timeout' | 'exit' | 'spawn';

export type NvidiaSmiResult = { ok: true; stdout: string } | { ok: false; failure: NvidiaSmiFailure; reason: string };

export interface RunNvidiaSmiOptions {
  timeoutMs?: number;
  /** Environment for nvidia-smi (default: this process's); also tells whether the path came from GPU_SHARE_NVIDIA_SMI. */
  env?: NodeJS.ProcessEnv;
}

/** The reason given when no nvidia-smi could be found at all. */
export const NOT_FOUND_ON_PATH = `nvidia-smi not found on PATH (set ${NVIDIA_SMI_ENV} to point at it)`;

/** Runs nvidia-smi with `args` (no shell) and reports stdout, or why it could not give any. */
export function runNvidiaSmi(nvidiaSmiPath: string | null, args: string[], opts: RunNvidiaSmiOptions = {}): Promise<NvidiaSmiResult> {
  if (nvidiaSmiPath === null) return Promise.resolve({ ok: false, failure: 'not-found', reason: NOT_FOUND_ON_PATH });
  const timeoutMs = opts.timeoutMs ?? NVIDIA_SMI_TIMEOUT_MS;
  const fromEnv = (opts.env ?? process.env)[NVIDIA_SMI_ENV]?.trim() === nvidiaSmiPath;
  return runGrouped(nvidiaSmiPath, args, opts.env, timeoutMs).then(({ error, stdout, stderr, timedOut }) =>
    error ? describeFailure(nvidiaSmiPath, error, stdout, stderr, timeoutMs, fromEnv, timedOut) : { ok: true, stdout },
  );
}

const MAX_OUTPUT_BYTES = 8 * 1024 * 1024;

interface GroupedRun {
  error: ExecError | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * execFile, except that on POSIX the program runs in its own process group and a timeout kills the whole group:
 * a wrapper script around nvidia-smi (containers, conda, WSL shims) would otherwise leave its hung child behind
 * on every poll. (execFile drops the `detached` option, hence spawn.) Windows has no process groups.
 */
function runGrouped(file: string, args: string[], env: NodeJS.ProcessEnv | undefined, timeoutMs: number): Promise<GroupedRun> {
  const posix = process.platform !== 'win32';
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(file, args, { detached: posix, windowsHide: true, stdio: ['ignore', 'pipe', 'pipe'], ...(env ? { env } : {}) });
    } catch (error) {
      // spawn throws synchronously for arguments it cannot pass (e.g. a NUL byte in the path).
      resolve({ error: error as ExecError, stdout: '', stderr: '', timedOut: false });
      return;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let overflow: ExecError | null = null;
    let timedOut = false;
    let settled = false;
    const killAll = (): void => {
      try {
        if (posix && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      // Something that left the group could still hold the pipes open; stop waiting for it.
      child.stdout?.destroy();
      child.stderr?.destroy();
    };
    const collect = (chunks: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_OUTPUT_BYTES) chunks.push(chunk);
      else if (!overflow) {
        overflow = Object.assign(new Error('stdout maxBuffer length exceeded'), { code: 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER' });
        killAll();
      }
    };
    child.stdout?.on('data', collect(out));
    child.stderr?.on('data', collect(err));
    const timer = setTimeout(() => {
      timedOut = true;
      killAll();
    }, timeoutMs);
    const finish = (error: ExecError | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ error, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), timedOut });
    };
    child.on('error', (error) => finish(error as ExecError));
    child.on('close', (code, signal) => {
      if (overflow) finish(overflow);
      else if (code === 0 && !timedOut) finish(null);
      else finish(Object.assign(new Error(`nvidia-smi ended with ${code ?? signal}`), { code, signal, killed: timedOut }));
    });
  });
}

type ExecError = Error & { code?: string | number | null; killed?: boolean; signal?: NodeJS.Signals | null };

function describeFailure(
  file: string,
  error: ExecError,
  stdout: string,
  stderr: string,
  timeoutMs: number,
  fromEnv: boolean,
  timedOut: boolean,
): NvidiaSmiResult & { ok: false } {
  const setBy = fromEnv ? ` (set by ${NVIDIA_SMI_ENV}: fix or unset it)` : '';
  if (error.code === 'ENOENT') return { ok: false, failure: 'not-found', reason: `nvidia-smi not found at ${file}${setBy}` };
  if (error.code === 'EACCES' || error.code === 'EISDIR') {
    return { ok: false, failure: 'not-executable', reason: `nvidia-smi at ${file} cannot be run (${error.code}): make it an executable file${setBy}` };
  }
  if (error.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') {
    return { ok: false, failure: 'exit', reason: `nvidia-smi printed more than 8 MiB (${file}); that is not an answer to our query` };
  }
  if (timedOut || error.killed || (error.signal && typeof error.code !== 'number')) {
    if (timedOut) {
      return {
        ok: false,
        failure: 'timeout',
        reason: `nvidia-smi did not answer within ${formatSeconds(timeoutMs)} (${file}): the driver may be hung; run it by hand to see`,
      };
    }
    return { ok: false, failure: 'exit', reason: `nvidia-smi was ended by ${error.signal ?? 'a signal'} (${file})` };
  }
  if (typeof error.code === 'number') {
    const line = firstMeaningfulLine(stderr) ?? firstMeaningfulLine(stdout);
    const hint = line ? hintFor(line) : null;
    const said = line ? `: ${line}` : ' and printed nothing';
    return { ok: false, failure: 'exit', reason: `nvidia-smi exited with code ${error.code}${said}${hint ? ` — ${hint}` : ''}` };
  }
  return { ok: false, failure: 'spawn', reason: `nvidia-smi could not be started from ${file}: ${error.message}` };
}

/** The first line that says something (nvidia-smi often ends its message with blank lines). */
export function firstMeaningfulLine(text: string): string | null {
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim();
    if (t !== '') return t.length > 300 ? `${t.slice(0, 299)}…` : t;
  }
  return null;
}

/** What to do about the driver errors nvidia-smi is known to print (texts from test/fixtures/nvidia-smi). */
export function hintFor(message: string): string | null {
  if (/driver\/library version mismatch/i.test(message)) {
    return 'the loaded kernel driver and its user-space library differ (typical after a driver update): reboot, or reload the nvidia kernel module';
  }
  if (/couldn't communicate with the NVIDIA driver/i.test(message)) {
    return 'the NVIDIA kernel driver is not loaded: install it or load it (modprobe nvidia), then try again';
  }
  if (/no devices were found/i.test(message)) {
    return 'the driver sees no GPU: check the card is seated and initialised (BIOS: Above 4G decoding / Resizable BAR)';
  }
  if (/no supported GPUs were found/i.test(message)) return 'no GPU is bound to the nvidia driver';
  if (/Failed to initialize NVML: Unknown Error/i.test(message)) {
    return 'NVML could not start; in a container this usually means the GPU devices were not passed in';
  }
  if (/insufficient permissions|permission denied/i.test(message)) return 'this user may not access the GPU devices (/dev/nvidia*)';
  return null;
}

/** GPUs and status from one nvidia-smi query; never throws. */
export async function queryNvidia(
  nvidiaSmiPath: string | null,
  opts: RunNvidiaSmiOptions = {},
): Promise<{ status: NvidiaStatus; gpus: DetectedGpu[] }> {
  const result = await runNvidiaSmi(nvidiaSmiPath, queryGpuArgs(QUERY_GPU_FIELDS), opts);
  const unavailable = (reason: string) => ({
    status: { available: false, path: nvidiaSmiPath, reason, driverVersion: null },
    gpus: [] as DetectedGpu[],
  });
  if (!result.ok) return unavailable(result.reason);
  let rows: ParsedGpuRow[];
  try {
    rows = parseQueryGpuCsv(result.stdout, QUERY_GPU_FIELDS);
  } catch (error) {
    const known = firstMeaningfulLine(result.stdout);
    const hint = known ? hintFor(known) : null;
    if (known && hint) return unavailable(`nvidia-smi said: ${known} — ${hint}`);
    return unavailable(`nvidia-smi output could not be read: ${messageOf(error)}`);
  }
  if (rows.length === 0) return unavailable('nvidia-smi ran but listed no GPUs');
  return {
    status: { available: true, path: nvidiaSmiPath, reason: null, driverVersion: rows.find((r) => r.driverVersion)?.driverVersion ?? null },
    gpus: rows.map((row, i) => rowToGpu(row, i)),
  };
}

/**
 * One nvidia-smi row as a DetectedGpu. Unified memory (Jetson, GB10) shows as memory.total `[N/A]`: such a GPU
 * is marked unified with vramTotalMb null here; detectHardware fills in system RAM, which it knows and we don't.
 */
export function rowToGpu(row: ParsedGpuRow, position: number): DetectedGpu {
  const name = row.name ?? 'NVIDIA GPU';
  const unified = row.memoryTotalMib === null || isUnifiedNvidiaName(name);
  return {
    index: row.index ?? position,
    uuid: row.uuid,
    name,
    vendor: 'nvidia',
    typeSlug: row.name ? gpuTypeSlug(name, 'nvidia') : 'nvidia-gpu',
    memoryType: unified ? 'unified' : 'discrete',
    vramTotalMb: unified ? null : row.memoryTotalMib,
    vramUsedMb: unified ? null : row.memoryUsedMib,
    vramFreeMb: unified ? null : row.memoryFreeMib,
    utilizationPct: row.utilizationGpuPct,
    temperatureC: row.temperatureC,
    source: 'nvidia-smi',
  };
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
