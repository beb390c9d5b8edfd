// The "Found on your network" slice and panel: the core's list (getDiscovered, then onDiscovered) lands sorted,
// a failure is shown in words, picking one fills URL and fingerprint but keeps the typed token, and the join panel
// lists name, URL, short fingerprint and whether the coordinator carries this machine's cluster tag.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ServicesContext, type AppServices } from '../../../src-renderer/app-context';
import { eventHandlers } from '../../../src-renderer/bridge';
import { createAppStore } from '../../../src-renderer/store/app-store';
import { discoveryFailed, fillFromDiscovered, setDiscovered, shortFingerprint, type DiscoverySlice } from '../../../src-renderer/features/join/discovery';
import { loadDiscovered } from '../../../src-renderer/features/join/discovery-commands';
import { initialState } from '../../../src-renderer/store/state';
import { FoundOnNetwork, JoinClusterPanel } from '../../../src-renderer/features/join/join-cluster-panel';
import type { GpuShareApi } from '../../../src-shared/ipc';
import type { DiscoveredCoordinator } from '../../../src-shared/nodes/ipc-discovery';

const CERT_A = 'ab'.repeat(32);
const CERT_B = Array.from({ length: 32 }, (_, i) => i.toString(16).padStart(2, '0')).join(':');

const lab: DiscoveredCoordinator = { name: 'lab-box', url: 'https://10.0.0.2:7421', certSha256: CERT_A, clusterName: 'lab', version: '0.9.0', seenAt: 1 };
const other: DiscoveredCoordinator = { name: 'attic', url: 'https://10.0.0.3:7421', certSha256: CERT_B, seenAt: 2 };

describe('discovery slice', () => {
  it('starts unknown, and replaces the list with each answer, sorted by name', () => {
    const s0 = initialState();
    expect(s0.discovery).toEqual({ coordinators: null, error: null });
    const s1 = setDiscovered(s0, [lab, other]);
    expect(s1.discovery.coordinators?.map((c) => c.name)).toEqual(['attic', 'lab-box']);
    expect(setDiscovered(s1, []).discovery.coordinators).toEqual([]);
  });

  it('keeps what was heard when listening fails, and clears the error with the next list', () => {
    const failed = discoveryFailed(setDiscovered(initialState(), [lab]), 'no multicast');
    expect(failed.discovery).toEqual({ coordinators: [lab], error: 'no multicast' });
    expect(setDiscovered(failed, [other]).discovery.error).toBeNull();
  });

  it('the bridge applies onDiscovered to the store', () => {
    const store = createAppStore();
    eventHandlers(store).onDiscovered([other, lab]);
    expect(store.getState().discovery.coordinators?.map((c) => c.url)).toEqual([other.url, lab.url]);
  });

  it('loadDiscovered stores the answer, or says why it could not look', async () => {
    const store = createAppStore();
    const asked: unknown[] = [];
    await loadDiscovered({ getDiscovered: async (arg: unknown) => (asked.push(arg), [lab]) } as unknown as GpuShareApi, store, ' tok-typed ');
    expect(store.getState().discovery.coordinators).toEqual([lab]);
    expect(asked).toEqual([{ token: 'tok-typed' }]); // the core lists only coordinators that prove this token
    await loadDiscovered({ getDiscovered: async (arg: unknown) => (asked.push(arg), [lab]) } as unknown as GpuShareApi, store);
    expect(asked.at(-1)).toEqual({});
    await loadDiscovered({ getDiscovered: async () => Promise.reject(new Error('socket closed')) } as unknown as GpuShareApi, store);
    expect(store.getState().discovery.error).toBe('Could not look for coordinators on the network: socket closed');
    expect(store.getState().discovery.coordinators).toEqual([lab]);
  });

  it('picking fills URL and the whole fingerprint, keeping the token and name typed', () => {
    const fields = { url: 'http://old:1', token: 'secret-token', name: 'me', certSha256: '' };
    expect(fillFromDiscovered(fields, lab)).toEqual({ url: lab.url, token: 'secret-token', name: 'me', certSha256: CERT_A });
  });

  it('shortens a fingerprint to its first 8 byte pairs, with or without colons', () => {
    expect(shortFingerprint(CERT_A)).toBe('ab:ab:ab:ab:ab:ab:ab:ab…');
    expect(shortFingerprint(CERT_B)).toBe('00:01:02:03:04:05:06:07…');
    expect(shortFingerprint('ab:cd')).toBe('ab:cd');
  });
});

describe('join panel: Found on your network', () => {
  const services = { api: {} as GpuShareApi, commands: {} as AppServices['commands'], inElectron: false };
  const list = (slice: DiscoverySlice, hasToken = true) => renderToStaticMarkup(createElement(FoundOnNetwork, { ...slice, onPick: () => undefined, hasToken }));

  it('sits inside the join form, above the manual fields, which stay', () => {
    const html = renderToStaticMarkup(createElement(ServicesContext.Provider, { value: services }, createElement(JoinClusterPanel)));
    expect(html).toContain('Found on your network');
    expect(html.indexOf('data-testid="discovered"')).toBeLessThan(html.indexOf('id="join-url"'));
    expect(html).toContain('id="join-cert"');
  });

  it('lists nothing until a join token is typed: only coordinators that prove it are shown', () => {
    const html = list(setDiscovered(initialState(), [lab]).discovery, false);
    expect(html).toContain('data-testid="discovered-needs-token"');
    expect(html).toContain('proves it holds that token');
    expect(html).not.toContain('discovered-item');
  });

  it('says it is looking before the first answer, and what to do when none is heard', () => {
    expect(list({ coordinators: null, error: null })).toContain('Looking…');
    expect(list({ coordinators: [], error: null })).toContain('data-testid="discovered-none"');
    // The real flag of `serve` (issue 17 defect 10): `--host` is the page's address, not the coordinator's.
    expect(list({ coordinators: [], error: null })).toContain('(serve --coordinator-host 0.0.0.0)');
    expect(list({ coordinators: [], error: null })).not.toContain('serve --host');
  });

  it('lists each coordinator with its URL, short fingerprint and cluster tag', () => {
    const html = list(setDiscovered(initialState(), [lab, other]).discovery);
    expect(html.match(/data-testid="discovered-item"/g)).toHaveLength(2);
    expect(html).toContain('Use lab-box at https://10.0.0.2:7421');
    expect(html).toContain('ab:ab:ab:ab:ab:ab:ab:ab…');
    expect(html).toContain(`title="${CERT_A}"`);
    expect(html).toContain('Cluster lab');
    expect(html).toContain('No cluster tag');
    expect(html.indexOf('attic')).toBeLessThan(html.indexOf('lab-box'));
  });

  it('shows why listening failed instead of the list', () => {
    const html = list({ coordinators: [lab], error: 'Could not look for coordinators on the network: socket closed' });
    expect(html).toContain('socket closed');
    expect(html).not.toContain('discovered-item');
  });
});
