/**
 * The project instructions through a whole agent (real HTTP to the fake coordinator, which does not ship
 * projects: every project route is refused): `prepare` comes back as a `prepared` failure naming the snapshot and
 * the coordinator's answer, and a start whose project cannot be readied ends at once (127) with the reason in the
 * run's output, instead of launching a trainer in the wrong folder.
 */
import { describe, expect, it } from 'vitest';
import { coordinator, shellPlan, startAgent, useAgentBench } from '../agent-fixtures';
import { waitFor } from '../fake-coordinator';

useAgentBench({ dirPrefix: 'gpu-share-agent-project-' });

const SNAPSHOT = '3f9a12'.padEnd(64, '0');

describe('the worker agent and a run project', () => {
  it('answers prepare with a prepared report, and refuses to launch a project it cannot ready', async () => {
    await startAgent();
    coordinator.give({ kind: 'prepare', runId: 'run-p', snapshot: SNAPSHOT, dataDir: null, dataMode: 'replicate', modules: [] });
    const prepared = await waitFor('a prepared report', () => coordinator.reportsOf('prepared').find((r) => r.status === 'failed'));
    expect(prepared).toMatchObject({ runId: 'run-p', snapshot: SNAPSHOT });
    // The fake knows no project route: its refusal (a 4xx) is the reason, as the real coordinator's would be.
    expect(prepared.detail).toMatch(new RegExp(`^could not fetch the manifest of snapshot ${SNAPSHOT.slice(0, 12)}… from the coordinator: 4\\d\\d `));

    coordinator.give({ kind: 'start', plan: shellPlan('echo should-not-run', { runId: 'run-p', command: ['train.py'], project: { snapshot: SNAPSHOT, dataDir: null, dataMode: 'replicate', dataFiles: null } }) });
    const exited = await waitFor('the run ended', () => coordinator.reportsOf('exited').find((r) => r.runId === 'run-p'));
    expect(exited.exitCode).toBe(127);
    expect(coordinator.reportsOf('output').map((r) => r.data).join('')).toContain('could not fetch the manifest');
  });
});
