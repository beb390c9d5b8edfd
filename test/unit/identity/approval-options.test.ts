// The ways a machine is approved without a person's click: `serve --auto-approve` and the desktop shell's
// --auto-approve (closed labs; the help states the risk), and a node key read over SSH (the fingerprint must
// match the key); and the Workers view's store, which lists only machines awaiting approval.
import { describe, expect, it } from 'vitest';
import { parseServeArgs } from '../../../src-main/cli/commands/serve';
import { NodeKeys } from '../../../src-main/core/coordinator/membership/node-keys';
import { parseShellArgs } from '../../../src-main/electron/shell-args';
import type { AwaitingMachine } from '../../../src-shared/nodes/awaiting-machine';
import { applyApprovalState, setAwaiting } from '../../../src-renderer/features/workers/approval';
import { initialState } from '../../../src-renderer/store/state';
import { cli } from '../cli/helpers';
import { newIdentity } from './identity-fixture';

const io = { cwd: '/w', env: {} };

describe('--auto-approve', () => {
  it('serve takes it (off by default) and its help names the risk', async () => {
    expect(parseServeArgs(['--auto-approve'], io).autoApprove).toBe(true);
    expect(parseServeArgs([], io).autoApprove).toBe(false);
    const help = await cli(['serve', '--help']);
    expect(help.out.replace(/\s+/g, ' ')).toContain(
      'Risk: any machine holding the join token trains, and can run code on every member machine including this one; for closed labs only',
    );
  });

  it('the desktop shell passes it on like --cluster-name', () => {
    expect(parseShellArgs(['/app/gpu-share', '--auto-approve', '--cluster-name', 'lab'], '/w')).toEqual({ autoApprove: true, clusterName: 'lab' });
    expect(parseShellArgs(['/app/gpu-share'], '/w')).toEqual({});
  });
});

describe('a key read over SSH', () => {
  it('is approved for the node before it joins, only when the fingerprint is that of the key', () => {
    const keys = new NodeKeys({ now: () => 1 });
    const node = newIdentity('ssh-node');
    const other = newIdentity('someone');
    expect(() => keys.approve('nodeb', other.fingerprint, node.publicKey)).toThrow(`the key given for nodeb has fingerprint ${node.fingerprint}, not ${other.fingerprint}: nothing was approved`);
    expect(keys.isApproved('nodeb', node.publicKey)).toBe(false);
    keys.approve('nodeb', node.fingerprint, node.publicKey);
    expect(keys.isApproved('nodeb', node.publicKey)).toBe(true);
  });
});

describe('the Workers view store', () => {
  const machine = (node: string, extra: Partial<AwaitingMachine> = {}): AwaitingMachine => ({
    node,
    fingerprint: `SHA256:${'a'.repeat(43)}`,
    address: '10.0.0.9',
    hardware: { gpus: [], cpuCores: 2, ramMb: 2048, torch: null },
    firstSeen: 1,
    lastSeen: 2,
    ...extra,
  });

  it('lists machines awaiting approval, not the held-back keys of approved nodes (shown on their row)', () => {
    const s = setAwaiting(initialState(), [machine('stranger'), machine('gpu-box', { heldBackFrom: `SHA256:${'b'.repeat(43)}` })]);
    expect(s.awaiting.map((a) => a.node)).toEqual(['stranger']);
    const after = applyApprovalState(s, { workers: [], awaiting: [] });
    expect(after.awaiting).toEqual([]);
  });
});
