/** The coordinator wires the survey: a worker's probe port from its join, probes on activation, links reports, forgetting on leave, /metrics. */
import { describe, expect, it } from 'vitest';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { linkFamilies } from '../../../src-main/core/metrics/link-metrics';
import { renderFamilies } from '../../../src-main/core/metrics/exposition';
import type { Instruction, JoinRequest } from '../../../src-shared/worker-protocol';
import { FakeClock } from './fake-clock';

function joinAs(svc: CoordinatorService, node: string, address: string, probePort?: number) {
  const req: JoinRequest = {
    node,
    agentVersion: 'test',
    machineId: `machine-of-${node}`.padEnd(24, '0'),
    gpus: [],
    cpuCores: 4,
    ramMb: 8192,
    advertiseHost: address,
    rdzvPort: 29400,
    python: null,
    local: false,
    ...(probePort ? { probePort } : {}),
  };
  return svc.join(req, address);
}

describe('links through the coordinator', () => {
  it('probes a newly active worker at its published address and probe port, keeps the report, forgets a worker that leaves', () => {
    const clock = new FakeClock();
    const svc = new CoordinatorService({ clock, joinToken: 'j', operatorToken: 'o', linkRefreshMs: 0 });
    const a = joinAs(svc, 'alpha', '10.0.0.2', 41001);
    const b = joinAs(svc, 'beta', '10.0.0.3', 41002);
    const beat = (w: typeof a): Instruction[] => svc.heartbeat(w.workerId, { incarnation: w.incarnation, progress: null }).instructions;
    beat(a);
    beat(b); // both active now: beta's links to and from alpha wait
    svc.tick();
    const told = [...beat(a), ...beat(b)];
    const measure = told.find((i) => i.kind === 'measure-links') as Extract<Instruction, { kind: 'measure-links' }>;
    const accept = told.find((i) => i.kind === 'accept-link-probe') as Extract<Instruction, { kind: 'accept-link-probe' }>;
    expect(measure.targets[0]).toMatchObject({ port: measure.targets[0]!.workerId === a.workerId ? 41001 : 41002, token: accept.token });
    expect(measure.targets[0]!.host).toBe(measure.targets[0]!.workerId === a.workerId ? '10.0.0.2' : '10.0.0.3');
    const sender = measure.targets[0]!.workerId === a.workerId ? b : a;
    svc.report(sender.workerId, { incarnation: sender.incarnation, reports: [{ type: 'links', probeId: measure.probeId, results: [{ toId: measure.targets[0]!.workerId, mbps: 19.4, rttMs: 0.3 }] }] });
    expect(svc.linkSurvey.links()).toEqual([expect.objectContaining({ fromId: sender.workerId, toId: measure.targets[0]!.workerId, mbps: 19.4, rttMs: 0.3 })]);
    svc.leave(a.workerId, { incarnation: a.incarnation, reason: 'bye' });
    expect(svc.linkSurvey.links()).toEqual([]);
  });

  it('measures nothing for an agent that sent no probe port (older agents)', () => {
    const clock = new FakeClock();
    const svc = new CoordinatorService({ clock, joinToken: 'j', operatorToken: 'o', linkRefreshMs: 0 });
    const a = joinAs(svc, 'alpha', '10.0.0.2', 41001);
    const b = joinAs(svc, 'beta', '10.0.0.3');
    for (const w of [a, b]) svc.heartbeat(w.workerId, { incarnation: w.incarnation, progress: null });
    svc.tick();
    const told = [a, b].flatMap((w) => svc.heartbeat(w.workerId, { incarnation: w.incarnation, progress: null }).instructions);
    expect(told.filter((i) => i.kind === 'measure-links' || i.kind === 'accept-link-probe')).toEqual([]);
  });

  it('shows measured links as gauges by node name; a failed probe has no sample', () => {
    const text = renderFamilies(
      linkFamilies({
        links: [
          { fromId: 1, toId: 2, from: 'alpha', to: 'beta', mbps: 19.5, rttMs: 0.25, measuredAt: 1 },
          { fromId: 2, toId: 1, from: 'beta', to: 'alpha', mbps: null, rttMs: null, measuredAt: 1, error: 'refused' },
        ],
      }),
    );
    expect(text).toMatch(/^gpu_share_link_bandwidth_mbps\{from="alpha",to="beta"\} 19\.5$/m);
    expect(text).toMatch(/^gpu_share_link_rtt_ms\{from="alpha",to="beta"\} 0\.25$/m);
    expect(text).not.toMatch(/from="beta"/);
  });
});
