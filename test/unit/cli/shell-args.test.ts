// The desktop shell's options come through util.parseArgs too, not strict (Chromium's switches and the app
// path share Electron's argv). A flag with its value missing must not swallow the next switch.
import { describe, expect, it } from 'vitest';
import { parseShellArgs } from '../../../src-main/electron/shell-args';

describe('parseShellArgs', () => {
  it('reads the next switch on its own when a value is missing', () => {
    expect(parseShellArgs(['/app/gpu-share', '--cluster', '--coordinator-host', '10.0.0.5'], '/w')).toEqual({ coordinatorHost: '10.0.0.5' });
    expect(parseShellArgs(['/app/gpu-share', '--coordinator-port', '--trust-advertised-hosts', '--cluster=c.yaml'], '/w')).toEqual({ trustAdvertisedHosts: true, clusterPath: '/w/c.yaml' });
  });

  it('ignores empty values and a value given to the boolean', () => {
    expect(parseShellArgs(['/app/gpu-share', '--cluster=', '--trust-advertised-hosts=yes', '--inspect=9229'], '/w')).toEqual({});
  });

  it('reads LAN discovery options as serve does: --cluster-name NAME and --no-advertise', () => {
    expect(parseShellArgs(['/app/gpu-share', '--cluster-name', 'lab one', '--no-advertise'], '/w')).toEqual({ clusterName: 'lab one', advertise: false });
    expect(parseShellArgs(['/app/gpu-share', '--cluster-name=lab'], '/w')).toEqual({ clusterName: 'lab' });
    // A name serve would refuse (leading space, too long) is dropped rather than advertised half-right; so is --no-advertise=x.
    expect(parseShellArgs(['/app/gpu-share', '--cluster-name= lab', '--no-advertise=yes'], '/w')).toEqual({});
    expect(parseShellArgs(['/app/gpu-share', `--cluster-name=${'x'.repeat(129)}`], '/w')).toEqual({});
    expect(parseShellArgs(['/app/gpu-share', '--cluster-name', '--no-advertise'], '/w')).toEqual({ advertise: false });
  });

  it('reads the cluster\'s heartbeat timeout and machine bound as serve does; values serve would refuse are dropped', () => {
    expect(parseShellArgs(['/app/gpu-share', '--heartbeat-timeout', '2.5', '--max-workers=40'], '/w')).toEqual({ heartbeatTimeoutMs: 2500, maxWorkers: 40 });
    expect(parseShellArgs(['/app/gpu-share', '--heartbeat-timeout=0.1', '--max-workers', '0'], '/w')).toEqual({});
    expect(parseShellArgs(['/app/gpu-share', '--heartbeat-timeout=601', '--max-workers=many'], '/w')).toEqual({});
  });
});
