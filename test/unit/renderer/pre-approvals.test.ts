// Pre-approvals in the Workers view (issue 26, item 6): keys approved by `workers approve NAME --key` before their
// machine was listed land in the store from the core's list (at load), its onPreApprovals event and what approve
// and revoke answer (the app sends the event once per change, and answers getPreApprovals); an older core's reply without them keeps what the store had; the table names each node with
// its full key, when it was approved and when it lapses, and shows nothing when there are none.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { createIdentityFeature } from '../../../src-main/app/identity-feature';
import { CoordinatorService } from '../../../src-main/core/coordinator/service/coordinator-service';
import { eventHandlers } from '../../../src-renderer/bridge';
import { PreApprovalsTable } from '../../../src-renderer/features/workers/node-approval';
import { createAppStore } from '../../../src-renderer/store/app-store';
import { applyApprovalState, loadAwaiting, setPreApprovals } from '../../../src-renderer/features/workers/approval';
import { initialState } from '../../../src-renderer/store/state';
import type { GpuShareApi } from '../../../src-shared/ipc';
import type { PreApproval } from '../../../src-shared/nodes/awaiting-machine';
import { FakeClock } from '../coordinator/fake-clock';
import { JOIN, newIdentity, OPERATOR } from '../identity/identity-fixture';
import { openTemp } from '../state/temp-state';

const NOW = 1_700_000_000_000;
const FP_D = `SHA256:${'D'.repeat(42)}Q`;
const FP_E = `SHA256:${'E'.repeat(42)}Q`;
const d: PreApproval = { node: 'host-d', fingerprint: FP_D, at: NOW - 5 * 60_000, expiresAt: NOW + 90 * 60_000 };
const e: PreApproval = { node: 'host-e', fingerprint: FP_E, at: NOW - 60_000, expiresAt: NOW + 30 * 60_000 };

describe('pre-approvals in the Workers view', () => {
  it('land from the load, the event and approve replies, soonest to lapse first; a reply without them keeps them', async () => {
    const store = createAppStore();
    const api = { getAwaiting: async () => [], getPreApprovals: async () => [d] } as unknown as GpuShareApi;
    await loadAwaiting(api, store);
    expect(store.getState().preApprovals).toEqual([d]);
    eventHandlers(store).onPreApprovals([d, e]);
    expect(store.getState().preApprovals.map((p) => p.node)).toEqual(['host-e', 'host-d']);
    const older = applyApprovalState(store.getState(), { workers: [], awaiting: [] });
    expect(older.preApprovals.map((p) => p.node)).toEqual(['host-e', 'host-d']);
    const met = applyApprovalState(store.getState(), { workers: [], awaiting: [], preApprovals: [e] });
    expect(met.preApprovals).toEqual([e]);
  });

  it('an older core without getPreApprovals leaves the list empty, not the load failed', async () => {
    const store = createAppStore({ ...initialState(), preApprovals: [d] });
    const api = { getAwaiting: async () => [], getPreApprovals: async () => Promise.reject(new Error('no such channel')) } as unknown as GpuShareApi;
    await loadAwaiting(api, store);
    expect(store.getState().preApprovals).toEqual([]);
    expect(store.getState().awaiting).toEqual([]);
  });

  it('the table names each node, its full key, when it was approved and when it lapses; nothing when none', () => {
    expect(renderToStaticMarkup(createElement(PreApprovalsTable, { preApprovals: [], now: NOW }))).toBe('');
    const html = renderToStaticMarkup(createElement(PreApprovalsTable, { preApprovals: setPreApprovals(initialState(), [d, e]).preApprovals, now: NOW }));
    expect(html).toContain('Approved, not joined yet');
    expect(html.indexOf('host-e')).toBeLessThan(html.indexOf('host-d'));
    expect(html).toContain(FP_D);
    expect(html).toContain(FP_E);
    expect(html).toContain('5 min ago');
    expect(html).toContain('in 90 min');
    expect(html).toContain('in 30 min');
  });

  it('the app answers getPreApprovals and sends onPreApprovals once per change (made, then revoked), not for an awaiting change', async () => {
    const sent: { event: string; payload: unknown }[] = [];
    const svc = new CoordinatorService({ clock: new FakeClock(), joinToken: JOIN, operatorToken: OPERATOR });
    const feature = createIdentityFeature({ db: openTemp(), coordinator: svc, emit: (event, payload) => sent.push({ event, payload }) });
    const key = newIdentity('late-machine');
    expect(await feature.handlers.getPreApprovals(undefined)).toEqual([]);
    await feature.handlers.approveNode({ node: 'host-d', fingerprint: key.fingerprint });
    const made = sent.filter((s) => s.event === 'onPreApprovals');
    expect(made).toEqual([{ event: 'onPreApprovals', payload: [expect.objectContaining({ node: 'host-d', fingerprint: key.fingerprint })] }]);
    expect(sent.filter((s) => s.event === 'onAwaiting')).toEqual([]);
    expect(await feature.handlers.getPreApprovals(undefined)).toEqual([expect.objectContaining({ node: 'host-d', fingerprint: key.fingerprint })]);
    await feature.handlers.revokeNode({ node: 'host-d' });
    expect(sent.filter((s) => s.event === 'onPreApprovals').map((s) => s.payload)).toEqual([made[0]!.payload, []]);
    feature.stop();
  });
});
