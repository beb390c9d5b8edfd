/**
 * `gpu-share worker install` on Linux, end to end, without systemd as PID 1 (as on these machines): the built CLI
 * checks this machine and a real `gpu-share serve`, writes the user unit into a temporary HOME; the test then runs
 * the unit's ExecStart exactly as written (its Environment=, its EnvironmentFile=, its WorkingDirectory=, and the
 * little environment a user manager gives), approves the new node once, SIGKILLs the worker, cleans up after it as
 * systemd would and starts the same command again as Restart=on-failure would: the worker re-attaches with the same
 * node key and name, active, with nothing awaiting approval. `worker status` follows along; `worker uninstall`
 * removes every file install wrote, leaving the data folder with the node key.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerSnapshot } from '../../src-shared/training';
import type { AwaitingMachine } from '../../src-shared/nodes/awaiting-machine';
import { appBuild, releaseBuild, type AppBuild } from '../multihost/helpers/app-snapshot';
import { freePort } from './helpers/serve-process';
import { systemdWords, tree, unitValues } from '../unit/service/service-fixtures';

let build: AppBuild;
let serve: ChildProcess;
let serveOutput = '';
let join: { url: string; token: string };
let dataDir: string;
let home: string;
const workers: ChildProcess[] = [];
let workerOutput = '';

/** The environment of a clean install run: this process's minus anything that would point the CLI elsewhere. */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  for (const k of ['GPU_SHARE_HOME', 'XDG_CONFIG_HOME', 'GPU_SHARE_JOIN_TOKEN', 'GPU_SHARE_COORDINATOR_CERT_SHA256']) delete env[k];
  return env;
}

function gpuShare(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [build.cli, ...args], { env: { ...baseEnv(), ...env }, timeout: 90_000 }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out, err });
    });
  });
}

async function operatorJson<T>(args: string[]): Promise<T> {
  const r = await gpuShare([...args, '--data-dir', dataDir, '--json']);
  expect(r, `gpu-share ${args.join(' ')}`).toMatchObject({ code: 0 });
  return JSON.parse(r.out) as T;
}

/** Starts the unit's ExecStart as a user manager would: its own process group, only the unit's environment. */
function startAsSystemd(unit: string): ChildProcess {
  const [program, ...args] = systemdWords(unitValues(unit, 'ExecStart')[0]!);
  const env: NodeJS.ProcessEnv = { HOME: home, USER: 'tester', LOGNAME: 'tester', LANG: 'C.UTF-8', GPU_SHARE_NO_DISCOVERY: '1' };
  for (const value of unitValues(unit, 'Environment')) {
    const [assignment] = systemdWords(value);
    const eq = assignment!.indexOf('=');
    env[assignment!.slice(0, eq)] = assignment!.slice(eq + 1);
  }
  for (const line of readFileSync(unitValues(unit, 'EnvironmentFile')[0]!, 'utf8').split('\n').filter(Boolean)) {
    const m = /^([A-Z_]+)="((?:[^"\\]|\\.)*)"$/.exec(line);
    if (!m) throw new Error(`unexpected line in the EnvironmentFile: ${line}`);
    env[m[1]!] = m[2]!.replace(/\\(.)/g, '$1');
  }
  const child = spawn(program!, args, { cwd: unitValues(unit, 'WorkingDirectory')[0]!, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  workers.push(child);
  for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding('utf8').on('data', (d: string) => (workerOutput += d));
  return child;
}

/** What systemd does after the main process died (KillMode=mixed, then Restart=): the rest of the unit goes too. */
function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

beforeAll(async () => {
  build = await appBuild();
  dataDir = mkdtempSync(path.join(tmpdir(), 'gpu-share-svc-coord-'));
  home = mkdtempSync(path.join(tmpdir(), 'gpu-share-svc-home-'));
  // A coordinator without a worker of its own, on loopback: the installed worker is the only one.
  const coordinatorPort = await freePort();
  serve = spawn(process.execPath, [build.cli, 'serve', '--no-local-worker', '--data-dir', dataDir, '--port', String(await freePort()), '--coordinator-host', '127.0.0.1', '--coordinator-port', String(coordinatorPort)], {
    env: { ...process.env, GPU_SHARE_STATIC_DIR: build.staticDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [serve.stdout!, serve.stderr!]) stream.setEncoding('utf8').on('data', (d: string) => (serveOutput += d));
  await pollUntil('gpu-share serve to start', async () => serveOutput.includes('GPU Share is running') && existsSync(path.join(dataDir, 'coordinator.json')));
  const { joinToken } = JSON.parse(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')) as { joinToken: string };
  join = { url: `http://127.0.0.1:${coordinatorPort}`, token: joinToken };
});

afterAll(async () => {
  for (const w of workers) killGroup(w);
  if (serve && serve.exitCode === null) {
    serve.kill('SIGTERM');
    await new Promise((r) => serve.once('exit', r));
  }
  for (const d of [dataDir, home]) if (d) rmSync(d, { recursive: true, force: true });
  releaseBuild();
});

describe('a worker installed as a systemd user service', () => {
  // Where systemd is PID 1 the install would really enable the unit: this test must not touch the machine's.
  it.skipIf(existsSync('/run/systemd/system'))('runs as its unit says, re-attaches after a SIGKILL and a restart with the same key and name, and uninstalls cleanly', async () => {
    const before = tree(home);

    const install = await gpuShare(['worker', 'install', '--join', join.url, '--name', 'svc-node'], { GPU_SHARE_JOIN_TOKEN: join.token });
    expect(install, install.err).toMatchObject({ code: 3 });
    expect(install.out).toMatch(/checking this machine and the coordinator/);
    expect(install.out).toMatch(/installed worker "svc-node" \(user service\)/);
    expect(install.out).toMatch(/systemd is not this machine's service manager/);
    const unitFile = path.join(home, '.config/systemd/user/gpu-share-worker.service');
    const unit = readFileSync(unitFile, 'utf8');
    expect(unit).not.toContain(join.token);

    const first = startAsSystemd(unit);
    // A new machine is approved once, by its key, as a person would in the Workers view (a coordinator may admit
    // a worker on its own machine by itself).
    const key = await pollUntil('the installed worker to join or await approval', async () => {
      const list = await operatorJson<{ workers: WorkerSnapshot[]; awaiting: AwaitingMachine[] }>(['workers', 'list']);
      const waiting = list.awaiting.find((a) => a.node === 'svc-node');
      if (waiting) await operatorJson(['workers', 'approve', 'svc-node', '--key', waiting.fingerprint]);
      return list.workers.find((w) => w.node === 'svc-node' && w.state === 'active')?.keyFingerprint ?? null;
    });
    expect(workerOutput).toContain(`node key ${key}`);
    await pollUntil('worker status to say joined', async () => {
      const s = await gpuShare(['worker', 'status', '--json']);
      const status = JSON.parse(s.out) as { installed: boolean; running: boolean; joined: boolean; worker: { pid: number } | null };
      return status.installed && status.running && status.joined && status.worker?.pid === first.pid;
    });

    // The agent crashes: SIGKILL, then what systemd does before Restart=on-failure starts the same command again.
    const firstOutput = workerOutput;
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    killGroup(first);
    const second = startAsSystemd(unit);
    await pollUntil('the restarted worker to re-attach without a new approval', async () => {
      const list = await operatorJson<{ workers: WorkerSnapshot[]; awaiting: AwaitingMachine[] }>(['workers', 'list']);
      expect(list.awaiting).toEqual([]);
      const s = await gpuShare(['worker', 'status', '--json']);
      const status = JSON.parse(s.out) as { joined: boolean; worker: { pid: number } | null };
      return status.joined && status.worker?.pid === second.pid && list.workers.some((w) => w.node === 'svc-node' && w.state === 'active' && w.keyFingerprint === key);
    });
    expect(workerOutput.slice(firstOutput.length)).toContain(`node key ${key}`);

    // Stopped (as `systemctl --user stop` would: SIGTERM), then uninstalled: every file install wrote goes.
    second.kill('SIGTERM');
    await new Promise((r) => second.once('exit', r));
    killGroup(second);
    const removed = await gpuShare(['worker', 'uninstall']);
    expect(removed, removed.err).toMatchObject({ code: 0 });
    expect(removed.out).toContain(`removed ${unitFile}`);
    const dataFolder = '.config/GPU Share/workers/svc-node/';
    const left = tree(home).filter((p) => !before.includes(p));
    expect(left.filter((p) => !p.startsWith(dataFolder))).toEqual(['.config/', '.config/GPU Share/', '.config/GPU Share/workers/']);
    expect(left).toContain(`${dataFolder}node-key`);
    expect(left).not.toContain(`${dataFolder}service-status.json`);
    expect(JSON.parse((await gpuShare(['worker', 'status', '--json'])).out)).toMatchObject({ installed: false, running: false });
  });
});

async function pollUntil<T>(what: string, check: () => Promise<T | null | false>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\nserve printed:\n${serveOutput.slice(-2000)}\nthe installed worker printed:\n${workerOutput.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
