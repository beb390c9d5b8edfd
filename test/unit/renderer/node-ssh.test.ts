// The SSH nodes' slice: the core's list and each onNodeSsh land by node name, a reconnect's list replaces what
// was there, card badges read Starting / Failed from it, the buttons follow the state, the host key prompt is the
// node waiting for one, and the commands put the core's answers (or its refusal, in words) into the store.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { HostKeyPrompt } from '../../../src-renderer/features/nodes/host-key-dialog';
import { eventHandlers } from '../../../src-renderer/bridge';
import { createAppStore } from '../../../src-renderer/store/app-store';
import { headerCapacity, nodeStatusBadge, statusReport } from '../../../src-renderer/features/nodes/node-status';
import { pendingHostKey, setNodeSshList, SSH_FAILED_BADGE, sshButtons, sshStartStates, toggleSshLog, upsertNodeSsh } from '../../../src-renderer/features/nodes/node-ssh';
import { createNodeSshCommands, loadNodeSsh } from '../../../src-renderer/features/nodes/node-ssh-commands';
import { initialState } from '../../../src-renderer/store/state';
import type { ClusterState, GpuShareApi } from '../../../src-shared/ipc';
import type { NodeSshStatus } from '../../../src-shared/nodes/ipc-ssh';

const FP = `SHA256:${'A'.repeat(42)}Q`;
const jetson: NodeSshStatus = { name: 'jetson', state: 'starting', detail: 'connecting to me@jetson.local' };
const attic: NodeSshStatus = { name: 'attic', state: 'awaiting-host-key', detail: 'unknown host key', fingerprint: FP };
const cluster = {
  config: {
    nodes: [
      { name: 'jetson', host: 'jetson.local', transport: 'ssh', gpus: [], max_adapters: 1 },
      { name: 'attic', host: 'attic.local', transport: 'ssh', gpus: [], max_adapters: 1 },
    ],
  },
} as unknown as ClusterState;

describe('node SSH slice', () => {
  it('starts empty; a list replaces it, an event updates one node, a log toggles open and shut', () => {
    const s0 = initialState();
    expect(s0.nodeSsh).toEqual({ byName: {}, logOpen: [], loadError: null });
    const s1 = setNodeSshList(s0, [jetson, attic]);
    const s2 = upsertNodeSsh(s1, { ...jetson, state: 'failed', detail: 'connect ECONNREFUSED 127.0.0.1:22' });
    expect(s2.nodeSsh.byName.jetson?.state).toBe('failed');
    expect(s2.nodeSsh.byName.attic).toEqual(attic);
    expect(setNodeSshList(s2, [jetson]).nodeSsh.byName).toEqual({ jetson });
    const open = toggleSshLog(s2, 'jetson');
    expect(open.nodeSsh.logOpen).toEqual(['jetson']);
    expect(toggleSshLog(open, 'jetson').nodeSsh.logOpen).toEqual([]);
  });

  it('card badges read Starting (host key: waiting for you) and Failed (cause below, not repeated) from SSH; online stays the worker list\'s', () => {
    const failed = { name: 'jetson', state: 'failed', detail: 'connect ECONNREFUSED 127.0.0.1:22' } as const;
    const slice = setNodeSshList(initialState(), [failed, attic, { name: 'x', state: 'online', detail: 'joined' }]).nodeSsh;
    const states = sshStartStates(slice);
    expect([...states.entries()]).toEqual([
      ['jetson', { state: 'failed', detail: SSH_FAILED_BADGE }],
      ['attic', { state: 'starting', detail: 'waiting for you to accept its host key' }],
    ]);
    const report = statusReport(cluster, [], states);
    expect(nodeStatusBadge(report.declared[0]!, 0).text).toBe('Failed: could not start over SSH (see below)');
    expect(nodeStatusBadge(report.declared[1]!, 0).text).toBe('Starting…');
    expect(headerCapacity(cluster, [], states).online.nodes).toBe(0);
    expect(statusReport(cluster, []).declared.map((d) => d.kind)).toEqual(['offline', 'offline']);
  });

  it('buttons follow the state: Start (and keep), Start again + Stop, Stop, none while a host key or a stop is pending', () => {
    expect(sshButtons(undefined)).toEqual({ start: 'Start', keep: true, stop: false, stopAsks: false, pending: null });
    expect(sshButtons({ ...jetson, state: 'failed' })).toEqual({ start: 'Start again', keep: true, stop: true, stopAsks: false, pending: null });
    expect(sshButtons({ ...jetson, state: 'online' })).toEqual({ start: null, keep: false, stop: true, stopAsks: false, pending: null });
    expect(sshButtons(attic).start).toBeNull();
    expect(sshButtons(attic).keep).toBe(false);
    expect(sshButtons({ ...jetson, state: 'stopping' }).pending).toBe('Stopping…');
  });

  it('a kept node: Stop asks first (also while stopped, its service still there), and no second "Start and keep"', () => {
    const kept = { ...jetson, kept: true };
    expect(sshButtons({ ...kept, state: 'online' })).toEqual({ start: null, keep: false, stop: true, stopAsks: true, pending: null });
    expect(sshButtons({ ...kept, state: 'offline' })).toEqual({ start: 'Start', keep: false, stop: true, stopAsks: true, pending: null });
    expect(sshButtons({ ...kept, state: 'failed' })).toEqual({ start: 'Start again', keep: false, stop: true, stopAsks: true, pending: null });
    expect(sshButtons({ ...kept, state: 'stopping' }).stop).toBe(false);
  });

  it('Start and keep sends keep: true; Stop and uninstall sends uninstall: true; plain ones send neither', async () => {
    const store = createAppStore();
    const calls: unknown[] = [];
    const api = {
      startNode: async (arg: unknown) => (calls.push(['start', arg]), { ...jetson, state: 'online', detail: 'joined', kept: true }),
      stopNode: async (arg: unknown) => (calls.push(['stop', arg]), { ...jetson, state: 'offline', detail: 'stopped' }),
    } as unknown as GpuShareApi;
    const commands = createNodeSshCommands(api, store);
    await commands.startNode('jetson', true);
    expect(store.getState().nodeSsh.byName.jetson?.kept).toBe(true);
    await commands.stopNode('jetson', true);
    await commands.startNode('jetson');
    await commands.stopNode('jetson');
    expect(calls).toEqual([
      ['start', { name: 'jetson', keep: true }],
      ['stop', { name: 'jetson', uninstall: true }],
      ['start', { name: 'jetson' }],
      ['stop', { name: 'jetson' }],
    ]);
  });

  it('the host key prompt is the first node (by name) waiting with a fingerprint', () => {
    const s = setNodeSshList(initialState(), [jetson, { ...attic, name: 'zeta' }, attic, { ...attic, name: 'aa', fingerprint: undefined }]);
    expect(pendingHostKey(s.nodeSsh)).toEqual({ name: 'attic', fingerprint: FP });
    expect(pendingHostKey(initialState().nodeSsh)).toBeNull();
  });

  it('the bridge applies onNodeSsh; loadNodeSsh fetches the list and says in words when it cannot', async () => {
    const store = createAppStore();
    eventHandlers(store).onNodeSsh(attic);
    expect(store.getState().nodeSsh.byName.attic).toEqual(attic);
    const api = { getNodeSsh: async () => [jetson] } as unknown as GpuShareApi;
    await loadNodeSsh(api, store);
    expect(store.getState().nodeSsh.byName).toEqual({ jetson });
    await loadNodeSsh({ getNodeSsh: async () => Promise.reject(new Error('socket closed')) } as unknown as GpuShareApi, store);
    expect(store.getState().nodeSsh.loadError).toBe("Could not load the SSH nodes' state: socket closed");
  });

  it('commands store the answers, mark busy while in flight, and turn a refusal into the error banner', async () => {
    const store = createAppStore();
    const calls: unknown[] = [];
    let seenBusy: string[] = [];
    const api = {
      startNode: async (arg: unknown) => {
        calls.push(['start', arg]);
        seenBusy = store.getState().busy;
        return { ...jetson, state: 'failed', detail: 'refused' };
      },
      startAllNodes: async () => [jetson, attic],
      answerHostKey: async (arg: unknown) => {
        calls.push(['answer', arg]);
        return { ...attic, state: 'failed', detail: 'you did not accept it' };
      },
      stopNode: async () => Promise.reject(new Error('cluster.yaml has no node named "ghost"')),
    } as unknown as GpuShareApi;
    const commands = createNodeSshCommands(api, store);
    await commands.startNode('jetson');
    expect(seenBusy).toContain('ssh:start:jetson');
    expect(store.getState().busy).not.toContain('ssh:start:jetson');
    expect(store.getState().nodeSsh.byName.jetson?.detail).toBe('refused');
    await commands.startAllNodes();
    expect(Object.keys(store.getState().nodeSsh.byName).sort()).toEqual(['attic', 'jetson']);
    await commands.answerHostKey('attic', FP, false);
    expect(calls).toContainEqual(['answer', { name: 'attic', fingerprint: FP, accept: false }]);
    expect(pendingHostKey(store.getState().nodeSsh)).toBeNull();
    await commands.stopNode('ghost');
    expect(store.getState().actionError).toBe('Could not stop ghost: cluster.yaml has no node named "ghost"');
  });
});

describe('host key prompt', () => {
  it('asks as ssh does, with the host and the whole fingerprint; Connect first, Cancel after it; both off while answering', () => {
    const props = { name: 'attic', host: 'attic.local', fingerprint: FP, answering: false, onAnswer: () => undefined };
    const html = renderToStaticMarkup(createElement(HostKeyPrompt, props));
    const text = html.replace(/<[^>]+>/g, '').replace(/&#x27;/g, "'");
    expect(text).toContain(`The authenticity of host attic.local can't be established. Its key fingerprint is ${FP}. Connect and remember it?`);
    expect(text).toContain('Connect to attic?');
    expect(html.indexOf('>Connect</button>')).toBeLessThan(html.indexOf('>Cancel</button>'));
    expect(html).not.toContain('disabled');
    expect(renderToStaticMarkup(createElement(HostKeyPrompt, { ...props, answering: true })).match(/disabled=""/g)).toHaveLength(2);
  });
});
