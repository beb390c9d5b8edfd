/**
 * Cluster over time survives serve restarting (issue 25: the per-minute history was in memory only, so a restart
 * started the view empty). `gpu-share serve` (the built CLI) and two `gpu-share worker` agents as OS processes on
 * 127.0.0.1, reporting their use in each heartbeat. Once a minute has closed, serve is SIGKILLed and started again:
 * every closed minute comes back as it was (the minute being filled may be lost). Then, with the agents stopped so
 * nothing new arrives, serve is stopped cleanly and started again: the history comes back exactly, the minute that
 * was being filled included.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { ClusterHistory, ClusterNodeHistory } from '../../src-shared/cluster/cluster-history';
import { poll, restartServe, useServedCluster, type ServedCluster as Cluster } from './helpers/served-cluster';

const requireCluster = useServedCluster({ prefix: 'gpu-share-cluster-history-', agents: ['alpha', 'beta'] });

const history = (c: Cluster) => c.api.request<ClusterHistory>('GET', '/v1/cluster/history');
const agentsOf = (h: ClusterHistory): ClusterNodeHistory[] => h.nodes.filter((n) => n.node === 'alpha' || n.node === 'beta');
/** Each machine's closed minutes (all but its last, still being filled). */
const closedMinutes = (h: ClusterHistory) => agentsOf(h).map((n) => ({ node: n.node, points: n.points.slice(0, -1) }));

describe('serve restarted: the Cluster over time history comes back', () => {
  it('a SIGKILL keeps every closed minute; a clean stop keeps everything', async () => {
    const c = requireCluster();
    // Both agents heard from in two minutes: at least one closed minute each (up to a minute of waiting).
    const before = await poll('a closed minute of both agents', async () => {
      const h = await history(c);
      return agentsOf(h).length === 2 && agentsOf(h).every((n) => n.points.length >= 2) ? h : null;
    }, 100_000);
    // A closed minute is a batched write: on disk within the writer's 250 ms.
    await sleep(1000);
    expect(await c.serve.kill()).toEqual({ code: null, signal: 'SIGKILL' });
    c.serve = await restartServe(c);
    const afterKill = await history(c);
    for (const kept of closedMinutes(before)) {
      const now = agentsOf(afterKill).find((n) => n.node === kept.node);
      expect(now?.points.slice(0, kept.points.length), `${kept.node}'s closed minutes after the SIGKILL`).toEqual(kept.points);
    }

    // Nothing new from here on: the agents stop, and the history read now is what a clean stop must keep.
    for (const a of c.agents) a.signal('SIGTERM');
    await Promise.all(c.agents.map((a) => a.exited));
    const settled = await history(c);
    expect(agentsOf(settled).length).toBe(2);
    await c.serve.stop();
    c.serve = await restartServe(c);
    expect(agentsOf(await history(c))).toEqual(agentsOf(settled));
  }, 200_000);
});
