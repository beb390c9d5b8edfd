/**
 * The agent through a coordinator restart (issue 15 item 4): it keeps its training and re-attaches under the new
 * epoch with a claim for what it runs, its output of the outage arriving after, without a gap; a refusal under
 * the same epoch (declared failed), a refused claim, or a grace that runs out still stop the training.
 */
import { describe, expect, it } from 'vitest';
import { lostAfterMs } from '../../../src-main/agent/worker-agent';
import { agent, coordinator, logs, pids, shellPlan, startAgent, useAgentBench } from './agent-fixtures';
import { isAlive, waitFor } from './fake-coordinator';

const EPOCH = 'AAAAAAAAAAAAAAAA';
/** Prints tick=1, tick=2, … every 50 ms: a gap in what reaches the coordinator shows as a missing number. */
const TICKER = 'i=0; while true; do i=$((i+1)); echo "tick=$i"; sleep 0.05; done';

useAgentBench({
  dirPrefix: 'gpu-share-failover-',
  setUp: (c) => {
    c.epoch = EPOCH;
    c.failoverGraceMs = 5000;
  },
});

async function startTicker(): Promise<number> {
  coordinator.give({ kind: 'start', plan: shellPlan(TICKER) });
  const r = await waitFor('the started report', () => coordinator.reportsOf('started')[0]);
  pids.push(r.pid);
  await waitFor('a few ticks', () => coordinator.output().includes('tick=3'));
  return r.pid;
}

const ticksSeen = (): number[] => [...coordinator.output().matchAll(/tick=(\d+)/g)].map((m) => Number(m[1]));

describe('WorkerAgent through a coordinator restart', () => {
  it('keeps its trainer (same pid) and re-attaches with a claim under the old epoch; the outage output arrives with no gap', async () => {
    await startAgent();
    const pid = await startTicker();
    coordinator.restart();
    await waitFor('the re-attach join', () => coordinator.joins.length === 2, 5000);
    expect(coordinator.joins[1]!.body.reattach).toEqual({ epoch: EPOCH, incarnation: 1, runId: 'run-1', generation: 0, runs: [{ runId: 'run-1', generation: 0 }] });
    await waitFor('the agent to be joined again', () => agent!.status().phase === 'joined', 5000);
    expect(isAlive(pid)).toBe(true);
    expect(agent!.status()).toMatchObject({ incarnation: 1, runs: [{ runId: 'run-1', generation: 0, pid }] });
    expect(logs.some((l) => l.startsWith('lost the coordinator:') && l.includes('the coordinator restarted') && l.includes('keeping run run-1 generation 0 running'))).toBe(true);
    expect(logs.some((l) => l.includes('re-attached') && l.includes('run run-1 generation 0 goes on'))).toBe(true);
    // Output goes on arriving under the same incarnation, and every tick printed while away is there.
    const before = Math.max(...ticksSeen());
    await waitFor('ticks after the re-attach', () => Math.max(...ticksSeen()) > before + 5, 5000);
    const ticks = ticksSeen();
    const max = Math.max(...ticks);
    expect(new Set(ticks).size).toBe(ticks.length); // nothing twice
    expect([...Array(max).keys()].map((i) => i + 1).filter((n) => !ticks.includes(n))).toEqual([]); // nothing missing
    expect(coordinator.reports.filter((r) => r.report.type === 'output').every((r) => r.incarnation === 1)).toBe(true);
  });

  it('names the run in its claim though the trainer finished while the coordinator was away; the exit report arrives after the re-attach', async () => {
    await startAgent();
    coordinator.give({ kind: 'start', plan: shellPlan('echo tick=1; sleep 0.4; echo tick=2; exit 0') });
    const r = await waitFor('the started report', () => coordinator.reportsOf('started')[0]);
    pids.push(r.pid);
    await waitFor('the first tick', () => coordinator.output().includes('tick=1'));
    coordinator.failJoins = 2; // away for a while: 503 to the joins (0.5 s, then 1 s before the next try)
    coordinator.restart();
    await waitFor('the trainer to finish', () => !isAlive(r.pid), 5000);
    await waitFor('the re-attach', () => coordinator.joins.length === 2, 10_000);
    expect(coordinator.joins[1]!.body.reattach).toEqual({ epoch: EPOCH, incarnation: 1, runId: 'run-1', generation: 0, runs: [{ runId: 'run-1', generation: 0 }] });
    const exited = await waitFor('the exit report', () => coordinator.reports.find((x) => x.report.type === 'exited'), 5000);
    expect(exited).toMatchObject({ incarnation: 1, report: { runId: 'run-1', generation: 0, exitCode: 0, requested: false } });
    expect(coordinator.output()).toContain('tick=2');
  }, 15_000);

  it('sends the exit report after the re-attach when the coordinator died during the heartbeat that precedes it', async () => {
    await startAgent();
    coordinator.give({ kind: 'start', plan: shellPlan('echo tick=1; sleep 0.4; echo tick=2; exit 0') });
    const r = await waitFor('the started report', () => coordinator.reportsOf('started')[0]);
    pids.push(r.pid);
    await waitFor('the first tick', () => coordinator.output().includes('tick=1'));
    await new Promise((resolve) => setTimeout(resolve, 250));
    coordinator.mode = 'hang'; // the heartbeat sent at the trainer's exit (before its exit report) waits for an answer
    await waitFor('the trainer to finish', () => !isAlive(r.pid), 5000);
    coordinator.answerHungAsRestarted(); // ... which says the coordinator restarted
    await waitFor('the re-attach', () => coordinator.joins.length === 2, 10_000);
    expect(coordinator.joins[1]!.body.reattach?.runs).toEqual([{ runId: 'run-1', generation: 0, ended: true }]);
    const exited = await waitFor('the exit report', () => coordinator.reports.find((x) => x.report.type === 'exited'), 5000);
    expect(exited).toMatchObject({ incarnation: 1, report: { runId: 'run-1', generation: 0, exitCode: 0, requested: false } });
  }, 15_000);

  it('stops its trainer at once when the same coordinator (same epoch) declared it failed, and joins as a new incarnation', async () => {
    await startAgent();
    const pid = await startTicker();
    coordinator.mode = 'stale-409';
    await waitFor('the trainer to be stopped', () => !isAlive(pid), 5000);
    await waitFor('the second join', () => coordinator.joins.length === 2, 5000);
    expect(coordinator.joins[1]!.body.reattach).toBeUndefined();
    expect(coordinator.joins[1]!.incarnation).toBe(2);
    expect(logs.some((l) => l.startsWith('lost the coordinator:') && l.includes('stopping run run-1 generation 0'))).toBe(true);
  });

  it('stops its trainer when the restarted coordinator refuses the claim', async () => {
    await startAgent();
    const pid = await startTicker();
    coordinator.reattachVerdict = 'refuse';
    coordinator.restart();
    await waitFor('the trainer to be stopped', () => !isAlive(pid), 5000);
    expect(coordinator.joins[1]!.body.reattach).toMatchObject({ epoch: EPOCH, incarnation: 1 });
    expect(coordinator.joins[1]!.incarnation).toBe(2);
    expect(logs.some((l) => l.startsWith('the coordinator did not take this worker back: the fake refuses re-attach claims; stopping run run-1 generation 0'))).toBe(true);
  });

  it('keeps its trainer through a silence longer than the timeout, and stops it only once the failover grace is over', async () => {
    coordinator.failoverGraceMs = 1500;
    await startAgent();
    const pid = await startTicker();
    coordinator.failJoins = 1_000; // nothing takes it back
    coordinator.mode = 'hang';
    const silentAt = Date.now();
    await waitFor('the loss', () => logs.some((l) => l.startsWith('lost the coordinator: no successful heartbeat')), 5000);
    expect(logs.some((l) => l.includes('keeping run run-1 generation 0 running and trying to re-attach'))).toBe(true);
    expect(isAlive(pid)).toBe(true);
    await waitFor('the trainer to be stopped', () => !isAlive(pid), 8000);
    // Lost after lostAfterMs of silence, then kept for the grace plus lostAfterMs.
    expect(Date.now() - silentAt).toBeGreaterThanOrEqual(1500 + 2 * lostAfterMs({ heartbeatTimeoutMs: 500, heartbeatIntervalMs: 100 }) - 200);
    expect(logs.some((l) => /^the coordinator did not take this worker back within its \d+\.\d s failover grace; stopping run run-1 generation 0/.test(l))).toBe(true);
  });
});
