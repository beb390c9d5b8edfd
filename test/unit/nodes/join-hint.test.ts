// Issue 17 defect 10: the words above the join command match it — a loopback-only coordinator's command can only
// run on this machine, so it says so, names the real flag to open it (--coordinator-host) and carries --name.
import { describe, expect, it } from 'vitest';
import { joinHint } from '../../../src-shared/nodes/join-hint';

const CMD = 'GPU_SHARE_JOIN_TOKEN=t gpu-share worker --join http://127.0.0.1:7421';

describe('joinHint', () => {
  it('on loopback only: "on this machine", the --coordinator-host flag, and a second name', () => {
    const hint = joinHint({ joinCommand: CMD, reachableFromOtherMachines: false }, 'vm');
    expect(hint.title).toContain('Add a worker on this machine');
    expect(hint.title).toContain('loopback only');
    expect(hint.title).toContain('--coordinator-host 0.0.0.0');
    expect(hint.title).not.toContain('another machine');
    expect(hint.title).not.toContain(':');
    expect(hint.command).toBe(`${CMD} --name vm-2`);
  });

  it('keeps a --name the command already has, and names a nameless own worker "worker-2"', () => {
    expect(joinHint({ joinCommand: `${CMD} --name box`, reachableFromOtherMachines: false }, 'vm').command).toBe(`${CMD} --name box`);
    expect(joinHint({ joinCommand: CMD, reachableFromOtherMachines: false }, '').command).toBe(`${CMD} --name worker-2`);
  });

  it('on the LAN: "run this on another machine" above the command as the coordinator made it', () => {
    const lan = 'GPU_SHARE_JOIN_TOKEN=t gpu-share worker --join https://10.0.0.5:7421 --cert-sha256 ab';
    expect(joinHint({ joinCommand: lan, reachableFromOtherMachines: true }, 'vm')).toEqual({ title: 'Add a worker: run this on another machine', command: lan });
  });
});
