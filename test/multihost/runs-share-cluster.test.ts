/**
 * A cluster, not a run (issue 15): one coordinator on A (no worker of its own) and five machines. Run "left"
 * trains on B and C, run "right" on D and E (allowed hosts), an adapter job on F — all at once. A sixth machine,
 * G, joins while both runs are at max_workers: it is let in (before issue 15: 409 "the run is full") and takes the
 * job that waited for a slot. Then C's agent is SIGKILLed: only "left" relaunches (a new generation on B alone);
 * "right" keeps its generation and its trainers' pids, and both runs train to the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import type { JobsState } from '../../src-shared/jobs/types';
import type { RunSnapshot } from '../../src-shared/training';
import { describeState } from './helpers/app';
import { canRunApp, required } from './helpers/can-make-hosts';
import type { Cluster } from './helpers/hosts';
import { describeJobs, submitManifest, waitJobs } from './helpers/jobs-watch';
import { ENDED, runOf, trainingTogether } from './helpers/run-watch';
import { trainerPids } from './helpers/serve-outage';
import { startApp, startWorker, stopTestbed, TRAINER, waitForActive, workerOf, type Testbed } from './helpers/testbed';

const STEP_SLEEP = '0.1';
/** Long enough that both runs still train after G joined and "left" relaunched; short enough for CI. */
const LEFT_STEPS = 400;
const RIGHT_STEPS = 450;
const JOB_STEPS = 400;

/** F and G take adapter jobs, one at a time each, so the second job must wait for G. */
function clusterYaml(cluster: Cluster): string {
  const lines = ['nodes:'];
  for (const h of ['f', 'g']) {
    const host = cluster.host(h);
    lines.push(`  - name: ${host.hostname}`, `    host: ${host.address}`, '    transport: ssh', '    gpus: []', '    max_adapters: 1');
  }
  return `${lines.join('\n')}\n`;
}

/** Two jobs that may run only on F or G; different seeds, so two jobs (a job's id is its defining fields). */
const MANIFEST = [1, 2]
  .map((seed) => [
    '[[jobs]]',
    `name = "probe-${seed}"`,
    `command = ["ddp_example.py", "--steps", "${JOB_STEPS}", "--step-sleep", "${STEP_SLEEP}", "--checkpoint-every", "0"]`,
    `seed = ${seed}`,
    'allowed_hosts = ["host-f", "host-g"]',
    '',
  ].join('\n'))
  .join('\n');

function runSpec(name: string, steps: number, hosts: string[]) {
  return {
    name,
    command: [TRAINER, '--steps', String(steps), '--step-sleep', STEP_SLEEP, '--checkpoint-every', '10'],
    samples: 600,
    minWorkers: 1,
    maxWorkers: 2,
    maxRestarts: 3,
    placement: { allowedHosts: hosts },
  };
}

describe.skipIf(!required(canRunApp(), 'the multihost several-runs case'))('two runs and a job share one cluster', () => {
  let tb: Testbed | null = null;

  beforeAll(async () => {
    tb = await startApp({
      hosts: ['a', 'b', 'c', 'd', 'e', 'f', 'g'],
      app: (cluster) => ({ localWorker: false, autoApprove: true, clusterYaml: clusterYaml(cluster) }),
    });
    // One after the other: five agents probing `import torch` at once on two busy cores can each miss the probe's
    // 20 s limit (then the machine joins without torch and no run may use it); in turn costs no more CPU.
    for (const host of ['b', 'c', 'd', 'e', 'f']) await (await startWorker(tb, host)).ready(60_000);
    await waitForActive(tb, ['host-b', 'host-c', 'host-d', 'host-e', 'host-f'], false);
  }, 180_000);

  afterAll(async () => {
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it('both runs train at once, G joins while they are full and takes the waiting job, a killed member relaunches only its own run', async () => {
    const { workers } = tb!;
    const t0 = Date.now();
    const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
    const left = await tb!.app.startRun(runSpec('left', LEFT_STEPS, ['host-b', 'host-c']));
    const right = await tb!.app.startRun(runSpec('right', RIGHT_STEPS, ['host-d', 'host-e']));
    const submitted = await submitManifest(tb!.app, 'probes.toml', MANIFEST);
    expect(submitted.added).toHaveLength(2);

    // Both runs at max_workers on their own pair, at the same moment, each past its first steps.
    const both = await tb!.app.waitForState(
      'both runs to train on their pairs at once',
      (s) => {
        const runs = [runOf(s, left.id), runOf(s, right.id)];
        for (const r of runs) if (ENDED.includes(r.state)) throw new Error(`run ${r.spec.name} ${r.state}: ${r.stateCause}`);
        const on = (r: RunSnapshot, nodes: string[]) =>
          r.state === 'running' && (r.progress?.step ?? -1) >= 5 && r.workerIds.length === nodes.length && nodes.every((n) => r.workerIds.includes(workerOf(s, n)?.id ?? -1));
        return on(runs[0]!, ['host-b', 'host-c']) && on(runs[1]!, ['host-d', 'host-e']) ? s : null;
      },
      180_000,
    );
    console.info(`runs-share-cluster: both runs training after ${elapsed()}`);
    const rightBefore = runOf(both, right.id);
    const leftBefore = runOf(both, left.id);
    // The job that found F free runs there; the other waits for a slot (F has one).
    await waitJobs(tb!.app, 'one job running on F, one waiting', (s) => {
      const running = s.jobs.filter((j) => j.status === 'running');
      return running.length === 1 && running[0]!.node === 'host-f' && s.jobs.some((j) => j.status === 'pending');
    }, 120_000);

    // G joins while both runs are full: let in, active, and it takes the waiting job.
    const g = await startWorker(tb!, 'g');
    await g.ready(60_000);
    await waitForActive(tb!, ['host-g'], false);
    expect(g.proc.lines.map((l) => l.text).filter((t) => /409|cannot join|is full/.test(t)), 'G was not refused').toEqual([]);
    const waiting = await tb!.app.api.request<JobsState>('GET', '/v1/jobs');
    console.info(`runs-share-cluster: G active after ${elapsed()}; jobs then:\n${describeJobs(waiting)}`);
    // The second job either still waits or G already claimed it (a claim can beat this read); what must not have
    // happened is F finishing the first job and taking the second (then this case's timing is too tight for the machine).
    const second = waiting.jobs.filter((j) => j.node !== 'host-f');
    expect(second.length === 1 && (second[0]!.status === 'pending' || second[0]!.node === 'host-g'), `one job waits for G or G has it\n${describeJobs(waiting)}`).toBe(true);
    const jobs = await waitJobs(tb!.app, 'the waiting job to run on G', (s) => (s.jobs.some((j) => j.status === 'running' && j.node === 'host-g') ? s : null), 90_000);
    console.info(`runs-share-cluster: G took the job after ${elapsed()}`);
    expect(jobs.jobs.filter((j) => j.status === 'running').map((j) => j.node).sort(), describeJobs(jobs)).toEqual(['host-f', 'host-g']);

    // Kill one of "left"'s members; "right" must not notice.
    const rightPids = { d: trainerPids(tb!, workers.get('d')!), e: trainerPids(tb!, workers.get('e')!) };
    expect(rightPids.d.length, 'D trains (torchrun and its rank)').toBeGreaterThanOrEqual(2);
    workers.get('c')!.proc.kill('SIGKILL');
    const relaunched = await trainingTogether(tb!, left.id, ['host-b'], { minStep: 0, after: leftBefore.generation, timeoutMs: 90_000 });
    console.info(`runs-share-cluster: "left" relaunched on B after ${elapsed()}`);
    const rightNow = runOf(relaunched.state, right.id);
    expect(rightNow.generation, `"right" relaunched: ${rightNow.stateCause}`).toBe(rightBefore.generation);
    expect(rightNow.state).toBe('running');
    expect({ d: trainerPids(tb!, workers.get('d')!), e: trainerPids(tb!, workers.get('e')!) }, 'the same trainers on D and E').toEqual(rightPids);

    // Both runs train to their end; the jobs complete.
    const end = await tb!.app.waitForState(
      'both runs to end',
      (s) => {
        const runs = [runOf(s, left.id), runOf(s, right.id)];
        return runs.every((r) => ENDED.includes(r.state)) ? { runs, s } : null;
      },
      240_000,
    );
    const [leftEnd, rightEnd] = end.runs;
    expect(leftEnd!.state, `"left": ${leftEnd!.stateCause}\n${describeState(end.s)}`).toBe('finished');
    expect(rightEnd!.state, `"right": ${rightEnd!.stateCause}\n${describeState(end.s)}`).toBe('finished');
    expect(rightEnd!.generation, '"right" kept its generation to the end').toBe(rightBefore.generation);
    expect(rightEnd!.restartsUsed, '"right" was charged no restart').toBe(0);
    for (const h of ['d', 'e']) {
      expect(workers.get(h)!.starts().filter((x) => x.runId === right.id), `${h} launched "right" once`).toHaveLength(1);
    }
    expect(leftEnd!.generation).toBeGreaterThan(leftBefore.generation);
    const done = await waitJobs(tb!.app, 'both jobs to complete', (s) => (s.counts.completed + s.counts.failed === 2 ? s : null), 120_000);
    expect(done.counts.completed, describeJobs(done)).toBe(2);
    console.info(`runs-share-cluster: "left" generation ${leftBefore.generation} → ${leftEnd!.generation}, "right" generation ${rightEnd!.generation} throughout; jobs on ${done.jobs.map((j) => j.node).join(', ')}`);
  }, 600_000);
});
