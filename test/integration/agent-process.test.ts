/**
 * One worker agent as a separate OS process (the same entry `gpu-share worker` uses) against the real
 * coordinator service and HTTP API in this process, running the example trainer on real torchrun to the end.
 * Also: SIGTERM makes it leave cleanly, and SIGKILL of the agent leaves no training process behind.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startCoordinatorHttp, type CoordinatorHttp } from '../../src-main/core/api/coordinator-http';
import { CoordinatorService } from '../../src-main/core/coordinator/service/coordinator-service';
import { descendantPids } from '../../src-main/platform/hardware/process-tree';
import { systemClock } from '../../src-main/platform/ports';
import { runSpecSchema } from '../../src-shared/worker-protocol';
import { startAgentProcess, type AgentProcessHandle } from '../unit/agent/agent-process-handle';
import { isAlive, waitFor } from '../unit/agent/fake-coordinator';

const JOIN = 'integration-join-token';
const OPERATOR = 'integration-operator-token';
const TRAINER = path.resolve('assets/trainers/ddp_example.py');

let service: CoordinatorService;
let http: CoordinatorHttp;
let work: string;
const agents: AgentProcessHandle[] = [];

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'gpu-share-agent-it-'));
  service = new CoordinatorService({ clock: systemClock, joinToken: JOIN, operatorToken: OPERATOR, heartbeatIntervalMs: 250, heartbeatTimeoutMs: 3000 });
  service.start();
  http = await startCoordinatorHttp(service, { host: '127.0.0.1', port: 0, joinToken: JOIN, operatorToken: OPERATOR });
});

afterEach(() => {
  // Anything a failed test left: only the groups this file started (each agent leads its own group).
  for (const a of agents.splice(0)) a.destroy();
});

afterAll(async () => {
  service.stop();
  await http.close();
  rmSync(work, { recursive: true, force: true });
});

function startAgent(name: string): AgentProcessHandle {
  const handle = startAgentProcess({ coordinatorUrl: http.url, token: JOIN, name, dataDir: path.join(work, name), env: { ...process.env, GPU_SHARE_HOME: work } });
  agents.push(handle);
  return handle;
}

describe('a worker agent process with the real coordinator', () => {
  it('joins, runs the example trainer on torchrun to the end, and leaves on SIGTERM without leftovers', async () => {
    const agent = startAgent('alpha');
    const ready = await agent.waitForLine(/worker ready: id=(\d+) node=alpha/);
    const workerId = Number(ready[1]);
    await waitFor('the worker to become active', () => service.workers().find((w) => w.id === workerId)?.state === 'active', 10_000);

    const run = service.startRun(
      runSpecSchema.parse({
        name: 'agent integration',
        command: [TRAINER, '--steps', '40', '--batch', '16', '--checkpoint-every', '10'],
        samples: 2000,
        minWorkers: 1,
        maxWorkers: 1,
        nprocPerNode: 2,
        maxRestarts: 0,
      }),
    );
    const finished = await waitFor(
      'the run to finish',
      () => {
        const r = service.runs().find((x) => x.id === run.id);
        return r && ['finished', 'failed', 'stopped'].includes(r.state) ? r : null;
      },
      150_000,
    );
    expect(finished.state, `${finished.stateCause}\n${service.runOutput(run.id).slice(-3000)}\n${agent.output()}`).toBe('finished');
    expect(finished.progress?.step).toBe(39);
    expect(finished.progress?.resumedFrom).toBe(0);
    expect(finished.shardHistory.at(-1)?.shards).toEqual([{ workerId, node: 'alpha', start: 0, end: 2000 }]);
    // The output reached the coordinator through the report stream, progress lines included.
    const output = service.runOutput(run.id);
    expect(output).toContain('GPU_SHARE_PROGRESS {"step":39');
    expect(output).toMatch(/"shard":\[0,1000\]/);
    expect(output).toMatch(/"shard":\[1000,2000\]/);
    const pid = agent.trainingPid();
    expect(pid).not.toBeNull();
    expect(agent.output()).toMatch(/exited with code 0/);
    // torchrun's rank logs and the checkpoint live under the agent's data dir.
    expect(readFileSync(path.join(work, 'alpha', 'checkpoints', run.id, 'ddp_example.pt')).length).toBeGreaterThan(0);

    agent.child.kill('SIGTERM');
    expect(await agent.exit).toBe(0);
    expect(agent.output()).toContain('worker stopped: the worker received SIGTERM');
    await waitFor('the coordinator to see it leave', () => service.workers().find((w) => w.id === workerId)?.state === 'left', 5000);
    expect(isAlive(agent.pid)).toBe(false);
    expect(isAlive(pid!)).toBe(false);
  });

  it('SIGKILL of the agent takes its training down with it (no orphans)', async () => {
    const agent = startAgent('beta');
    const ready = await agent.waitForLine(/worker ready: id=(\d+) node=beta/);
    const workerId = Number(ready[1]);
    await waitFor('the worker to become active', () => service.workers().find((w) => w.id === workerId)?.state === 'active', 10_000);
    const run = service.startRun(
      runSpecSchema.parse({
        name: 'orphan check',
        command: [TRAINER, '--steps', '100000', '--step-sleep', '0.05', '--checkpoint-every', '50'],
        samples: 1000,
        minWorkers: 1,
        maxWorkers: 1,
        nprocPerNode: 2,
      }),
    );
    await waitFor('training steps', () => (service.runs().find((r) => r.id === run.id)?.progress?.step ?? -1) >= 3, 120_000);
    const launcher = agent.trainingPid()!;
    const ranks = descendantPids(launcher);
    expect(ranks.length).toBeGreaterThanOrEqual(2);

    process.kill(agent.pid, 'SIGKILL');
    await agent.exit;
    // The pty's master closes with the agent; torchrun gets SIGHUP and takes its ranks down.
    await waitFor('the launcher and every rank to be gone', () => [launcher, ...ranks].every((p) => !isAlive(p)), 30_000);
    service.stopRun(run.id);
  });
});
