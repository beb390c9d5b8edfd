/**
 * Two real hosts (network namespaces, each with a host name nobody resolves) train the example trainer
 * together through the launcher shim, with exactly the argv and env buildLaunchCommand makes for their plans.
 * The same launch through plain `python -m torch.distributed.run` never forms the group: torch hands the
 * ranks MASTER_ADDR=host-a, which host B cannot resolve. So the shim is what makes two machines train.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTrainingEnv } from '../../src-main/platform/runs/child-env';
import { parseProgressLine, type TrainerProgressLine } from '../../src-main/platform/runs/progress-line';
import { describeNoPython, findPythonDetailed, type PythonWithTorch } from '../../src-main/platform/runs/python-finder';
import { buildLaunchCommand, launcherShimPath } from '../../src-main/platform/runs/torchrun-command';
import type { LaunchPlan } from '../../src-shared/worker-protocol';
import { createHostPair, hostInterfaces, netnsUnavailableReason, onHost, type HostPair, type NetnsHost } from './helpers/netns-pair';
import { waitFor } from './helpers/wait';

const TRAINER = path.resolve('assets/trainers/ddp_example.py');
const STEPS = 6;
// How long the plain launch gets to form the group after its rendezvous; the shim's launch needs far less.
const NEGATIVE_GRACE_MS = 15_000;

const unavailable = netnsUnavailableReason();
if (unavailable && process.env.CI === 'true') throw new Error(`CI runs as root and must run the two-host test, but: ${unavailable}`);
if (unavailable) console.warn(`skipping torchrun-shim-hosts: cannot make network namespaces here: ${unavailable}`);

interface Launched {
  child: ChildProcess;
  output: () => string;
  progress: TrainerProgressLine[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  done: () => boolean;
}

let pair: HostPair;
let python: PythonWithTorch;
let work: string;
const children: Launched[] = [];

function launch(host: NetnsHost, argv: string[], env: Record<string, string>): Launched {
  const full = onHost(host, argv);
  // Own process group: the launcher's ranks share it, so one kill(-pid) ends the whole node.
  const child = spawn(full[0]!, full.slice(1), { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let carry = '';
  let finished = false;
  const progress: TrainerProgressLine[] = [];
  const onData = (d: Buffer): void => {
    out += d.toString();
    const lines = (carry + d.toString()).split('\n');
    carry = lines.pop() ?? '';
    for (const l of lines) {
      const p = parseProgressLine(l);
      if (p) progress.push(p);
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      finished = true;
      resolve({ code, signal });
    }),
  );
  const launched = { child, output: () => out, progress, exited, done: () => finished };
  children.push(launched);
  return launched;
}

async function stopAll(): Promise<void> {
  for (const l of children.splice(0)) {
    if (l.done() || l.child.pid === undefined) continue;
    try {
      process.kill(-l.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await l.exited;
  }
}

function plan(host: NetnsHost, rdzvHost: boolean, rdzvEndpoint: string, rdzvId: string): LaunchPlan {
  return {
    runId: 'shim-hosts',
    generation: 0,
    launcher: 'torchrun',
    command: [TRAINER, '--steps', String(STEPS), '--batch', '8', '--checkpoint-every', '0'],
    nnodes: '2:2',
    nprocPerNode: 1,
    rdzvEndpoint,
    rdzvId,
    maxRestarts: 0,
    // LOGLEVEL=INFO: torchrun then logs its rendezvous result, master_addr included.
    env: { GPU_SHARE_SAMPLES: '512', LOGLEVEL: 'INFO' },
    useGpus: false,
    localAddr: host.addr,
    rdzvHost,
  };
}

/** What the agent would run on `host` for its plan: buildLaunchCommand with that host's own interfaces. */
function agentLaunch(host: NetnsHost, p: LaunchPlan): { argv: string[]; env: Record<string, string> } {
  const cmd = buildLaunchCommand(p, python, { gpuCount: 0, logDir: path.join(work, host.ns, 'logs'), interfaces: hostInterfaces(host), inheritedEnv: process.env });
  expect(cmd.notes).toEqual([]);
  const env = buildTrainingEnv({
    inherited: process.env,
    planEnv: p.env,
    launcherEnv: cmd.env,
    checkpointDir: path.join(work, host.ns, 'ckpt'),
    gpuUuids: [],
  });
  return { argv: cmd.argv, env };
}

const rendezvousDone = (l: Launched, addr: string): boolean => l.output().includes(`master_addr=${addr}`);

interface Pair {
  nodes: [Launched, Launched];
  launches: [ReturnType<typeof agentLaunch>, ReturnType<typeof agentLaunch>];
  /** The tail of both hosts' output, for failure messages. */
  seen: () => string;
}

/** Starts host A (rdzvHost) and host B with the agent's launch for their plans, changed by `tweak` if given. */
function startPair(port: number, rdzvId: string, tweak: (argv: string[], env: Record<string, string>) => string[] = (argv) => argv): Pair {
  const { a, b } = pair;
  const endpoint = `${a.addr}:${port}`;
  const launches = [agentLaunch(a, plan(a, true, endpoint, rdzvId)), agentLaunch(b, plan(b, false, endpoint, rdzvId))] as Pair['launches'];
  const nodes = [a, b].map((h, i) => launch(h, tweak([...launches[i]!.argv], launches[i]!.env), launches[i]!.env)) as Pair['nodes'];
  const seen = (): string => nodes.map((n, i) => `--- host ${'ab'[i]} ---\n${n.output().slice(-2500)}`).join('\n');
  return { nodes, launches, seen };
}

describe.skipIf(!!unavailable)('two hosts whose names do not resolve, through the launcher shim', () => {
  beforeAll(async () => {
    const found = await findPythonDetailed();
    if (!found.found) throw new Error(`this test needs PyTorch: ${describeNoPython(found)}`);
    python = found.found;
    work = mkdtempSync(path.join(tmpdir(), 'gpu-share-shim-hosts-'));
    pair = createHostPair('gsshim', `10.77.${(process.pid % 200) + 20}`);
  });
  afterAll(async () => {
    await stopAll();
    pair?.remove();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("with the shim: both hosts train to the end in one group of world size 2, rank 0 reached at host A's address", async () => {
    const { a, b } = pair;
    const { nodes, launches, seen } = startPair(29400, 'shim-ok');
    const [launchA, launchB] = launches;
    expect(launchA.argv[1]).toBe(launcherShimPath());
    expect(launchA.argv).toContain('--rdzv_conf=last_call_timeout=2,is_host=1');
    expect(launchB.argv).toContain('--rdzv_conf=last_call_timeout=2,is_host=0');
    expect(launchA.env).toMatchObject({ GPU_SHARE_LOCAL_ADDR: a.addr, GLOO_SOCKET_IFNAME: a.ifname, NCCL_SOCKET_IFNAME: `=${a.ifname}` });
    expect(launchB.env).toMatchObject({ GPU_SHARE_LOCAL_ADDR: b.addr, GLOO_SOCKET_IFNAME: b.ifname });

    await waitFor('both rendezvous results naming host A by address', () => nodes.every((n) => rendezvousDone(n, a.addr)), {
      timeoutMs: 60_000,
      recheckMs: 200,
      describe: seen,
    });
    const rendezvousAt = Date.now();
    await waitFor('a progress line', () => nodes.some((n) => n.progress.length > 0), { timeoutMs: 60_000, recheckMs: 100, describe: seen });
    const toFirstStepMs = Date.now() - rendezvousAt;
    const [exitA, exitB] = await Promise.all(nodes.map((n) => n.exited));
    console.log(`shim run: rendezvous to first step ${toFirstStepMs} ms\n${seen()}`);

    expect(exitA, seen()).toEqual({ code: 0, signal: null });
    expect(exitB, seen()).toEqual({ code: 0, signal: null });
    expect(nodes[0].output()).toContain(`gpu-share launcher: torch ${python.torchVersion}: this node advertises ${a.addr}`);
    nodes.forEach((node, rank) => {
      expect(node.progress.map((p) => p.step)).toEqual(Array.from({ length: STEPS }, (_, i) => i));
      expect(node.progress.every((p) => p.worldSize === 2 && p.rank === rank)).toBe(true);
    });
    // The plain launch below gets NEGATIVE_GRACE_MS: that bound means something only if this run is much faster.
    expect(toFirstStepMs).toBeLessThan(NEGATIVE_GRACE_MS / 3);
  });

  it('without the shim (plain -m torch.distributed.run, same args and env) the group never forms', async () => {
    const { nodes, seen } = startPair(29401, 'shim-none', (argv) => [argv[0]!, '-m', 'torch.distributed.run', ...argv.slice(2)]);
    // The agents still meet (the c10d store is at an address), then torch hands out the host name.
    await waitFor('both rendezvous results naming host A by its name', () => nodes.every((n) => rendezvousDone(n, pair.a.hostname)), {
      timeoutMs: 60_000,
      recheckMs: 200,
      describe: seen,
    });
    const deadline = Date.now() + NEGATIVE_GRACE_MS;
    await waitFor('the grace period to pass or a node to end', () => Date.now() > deadline || nodes.some((n) => n.done()), {
      timeoutMs: NEGATIVE_GRACE_MS + 5_000,
      recheckMs: 250,
    });
    console.log(`plain run, ${NEGATIVE_GRACE_MS} ms after its rendezvous:\n${seen()}`);
    expect(nodes.every((n) => n.progress.length === 0), seen()).toBe(true);
    for (const n of nodes) if (n.done()) expect((await n.exited).code).not.toBe(0);
    expect(nodes[0].output()).not.toContain('gpu-share launcher:');
    await stopAll();
  });

  it('with the shim but no GLOO_SOCKET_IFNAME, gloo binds loopback and the group fails: the interface variable is needed too', async () => {
    const { nodes, seen } = startPair(29402, 'shim-no-ifname', (argv, env) => {
      delete env.GLOO_SOCKET_IFNAME;
      return argv;
    });
    // The rank that tries first fails at once; its peer may wait on, so the first failure is the signal.
    await waitFor('a gloo connection to loopback to fail', () => /connect \[127\.0\.0\.1\]:\d+: Connection refused/.test(seen()), {
      timeoutMs: 60_000,
      recheckMs: 250,
      describe: seen,
    });
    console.log(`shim run without GLOO_SOCKET_IFNAME:\n${seen()}`);
    expect(nodes.every((n) => rendezvousDone(n, pair.a.addr)), seen()).toBe(true);
    expect(nodes.every((n) => n.progress.length === 0)).toBe(true);
    for (const n of nodes) if (n.done()) expect((await n.exited).code).not.toBe(0);
    await stopAll();
  });
});
