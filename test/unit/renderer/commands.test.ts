// The page's commands against the real stack: WebSocket client → headless server → app core in a temp folder.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startHeadlessServer, type HeadlessServer } from '../../../src-main/headless/headless-server';
import { createWsClient, type Connection, type SocketLike } from '../../../src-renderer/api/ws-client';
import { createCommands, MAX_CLUSTER_FILE_BYTES, type Commands, type FileLike } from '../../../src-renderer/commands';
import { createAppStore, type AppStore } from '../../../src-renderer/store/app-store';
import { loadAll } from '../../../src-renderer/bridge';
import { makeCoreFixture, type CoreFixture } from '../headless/helpers';

const FIXTURES = path.resolve(__dirname, '..', '..', 'fixtures', 'cluster');

let fx: CoreFixture;
let server: HeadlessServer;
let connection: Connection;
let store: AppStore;
let commands: Commands;

function file(name: string, text: string, size = Buffer.byteLength(text)): FileLike & { reads: number } {
  const f = {
    name,
    size,
    reads: 0,
    text: async () => {
      f.reads++;
      return text;
    },
  };
  return f;
}

const fixture = (name: string) => file(name, readFileSync(path.join(FIXTURES, name), 'utf8'));

beforeAll(async () => {
  fx = await makeCoreFixture();
  server = await startHeadlessServer(fx.core, { port: 0, staticDir: fx.staticDir });
  const client = createWsClient({
    url: `ws://127.0.0.1:${server.port}/ws?token=${server.token}`,
    createSocket: (u) => new WebSocket(u) as unknown as SocketLike,
  });
  connection = client.connection;
  store = createAppStore();
  commands = createCommands(client.api, store);
  await loadAll(client.api, store);
});

afterAll(async () => {
  connection?.close();
  await server?.close();
  await fx?.cleanup();
});

describe('commands', () => {
  it('imports a dropped file straight away into an empty cluster', async () => {
    expect(store.getState().loaded).toBe(true);
    await commands.openClusterFile(fixture('sample.yaml'));
    const s = store.getState();
    expect(s.cluster?.config.nodes.map((n) => n.name)).toEqual(['desktop', 'jetson', 'intel-box']);
    expect(s.pendingImport).toBeNull();
    expect(s.busy).toEqual([]);
  });

  it('asks Replace or Merge once there is a cluster, and merges when told to', async () => {
    const incoming = file('more.yaml', 'nodes:\n  - name: lab\n    host: lab.example\n    transport: ssh\n    max_adapters: 2\n');
    await commands.openClusterFile(incoming);
    expect(store.getState().pendingImport?.fileName).toBe('more.yaml');
    expect(store.getState().cluster?.config.nodes).toHaveLength(3);
    await commands.confirmImport('merge');
    const s = store.getState();
    expect(s.cluster?.config.nodes.map((n) => n.name)).toEqual(['desktop', 'jetson', 'intel-box', 'lab']);
    expect(s.clusterNotice?.text).toBe('Imported more.yaml: added lab — 4 nodes in the cluster.');
  });

  it('shows an invalid file’s errors and keeps the cluster', async () => {
    await commands.openClusterFile(fixture('invalid-zero-vram.yaml'));
    await commands.confirmImport('replace');
    const s = store.getState();
    expect(s.importProblem?.fileName).toBe('invalid-zero-vram.yaml');
    expect(s.importProblem?.errors[0]?.message).toMatch(/has zero VRAM$/);
    expect(s.importProblem?.errors[0]?.line).toBeGreaterThan(0);
    expect(s.cluster?.config.nodes).toHaveLength(4);
  });

  it('refuses a file over 1 MiB without reading or sending it', async () => {
    const big = file('huge.yaml', 'x', MAX_CLUSTER_FILE_BYTES + 1);
    await commands.openClusterFile(big);
    expect(big.reads).toBe(0);
    expect(store.getState().importProblem?.errors[0]?.message).toBe('huge.yaml is 1.0 MiB; a cluster.yaml must be at most 1 MiB. Nothing was changed.');
  });

  it('says once that a dropped train.py is neither a cluster.yaml nor a job manifest, not a YAML error per line (issue 17 defect 13)', async () => {
    const script = 'import torch\n\ndef main():\n    x = {"a": [1, 2}\n    print(x)\n\nif __name__ == "__main__":\n    main()\n';
    const before = store.getState().cluster?.config.nodes.length;
    await commands.openClusterFile(file('train.py', script));
    const s = store.getState();
    expect(s.pendingImport).toBeNull();
    expect(s.importProblem?.fileName).toBe('train.py');
    expect(s.importProblem?.errors.map((e) => e.message)).toEqual([
      'this is neither a cluster.yaml nor a job manifest: a cluster.yaml is YAML with a top-level "nodes:" list (a .yaml or .yml file), and a job manifest is a .toml file. Nothing was changed.',
    ]);
    expect(s.cluster?.config.nodes.length).toBe(before);
    // The core's import says the same for any caller.
    const direct = await fx.core.handlers.importCluster({ fileName: 'notes.txt', text: 'just some notes: here\nand: more\n', mode: 'replace' });
    expect(direct).toMatchObject({ ok: false, fileName: 'notes.txt', errors: [{ message: expect.stringMatching(/^this is neither a cluster\.yaml nor a job manifest/) }] });
  });

  it('turns a refused request into one readable line, and clears busy flags', async () => {
    await commands.removeNode('ghost');
    expect(store.getState().actionError).toBe('Could not remove node ghost: there is no node named "ghost"');
    expect(store.getState().busy).toEqual([]);
    await commands.removeNode('lab');
    expect(store.getState().actionError).toBeNull();
    expect(store.getState().cluster?.config.nodes.map((n) => n.name)).not.toContain('lab');
  });

  it('adds no second node for this machine when one points here (desktop at localhost), and exports the cluster as YAML', async () => {
    const before = store.getState().cluster?.config.nodes.map((n) => n.name);
    await commands.addThisMachine();
    const s = store.getState();
    expect(s.clusterNotice?.text).toMatch(/^This machine is already node "desktop": nothing was added/);
    expect(s.cluster?.config.nodes.map((n) => n.name)).toEqual(before);
    const exported = await commands.exportCluster();
    expect(exported?.fileName).toBe('cluster.yaml');
    expect(exported?.text).toMatch(/^nodes:\n {2}- name: desktop\n/);
  });
});
