/** `gpu-share nodes`: which nodes a command means, and the coordinator the nodes will join, from real files. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { coordinatorJoin, loadCluster, pickNodes } from '../../../src-main/cli/commands/nodes/nodes-context';

const dir = mkdtempSync(path.join(tmpdir(), 'gs-nodes-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = path.join(dir, 'cluster.yaml');
writeFileSync(file, `nodes:
  - name: here
    host: localhost
    transport: local
    gpus: []
    max_adapters: 1
  - name: box
    host: 10.0.0.7
    transport: ssh
    user: ada
    gpus: []
    max_adapters: 1
`);

describe('gpu-share nodes: nodes and coordinator', () => {
  it('picks a named ssh node or all of them, and refuses the rest by name', async () => {
    const config = await loadCluster(file);
    expect(pickNodes(config, file, 'box', false).map((n) => n.name)).toEqual(['box']);
    expect(pickNodes(config, file, undefined, true).map((n) => n.name)).toEqual(['box']);
    expect(() => pickNodes(config, file, 'here', false)).toThrow(/transport: local; only transport: ssh/);
    expect(() => pickNodes(config, file, 'nope', false)).toThrow(/no node named "nope" \(its nodes: here, box\)/);
    expect(() => pickNodes(config, file, undefined, false)).toThrow(/--all/);
  });

  it('an invalid cluster.yaml is refused with its file and line', async () => {
    const bad = path.join(dir, 'bad.yaml');
    writeFileSync(bad, 'nodes:\n  - name: x\n    transport: carrier-pigeon\n');
    await expect(loadCluster(bad)).rejects.toThrow(/bad\.yaml is not a valid cluster:\n.*bad\.yaml:\d+/);
  });

  it('the coordinator: none running is refused; loopback https gets the LAN address; plain loopback cannot be joined', async () => {
    const data = path.join(dir, 'data');
    await expect(coordinatorJoin(data, undefined)).rejects.toThrow(/no coordinator is running with the data folder/);
    writeFileSync(path.join(dir, 'secrets.json'), JSON.stringify({ joinToken: 'j'.repeat(32) }));
    const record = (url: string, certSha256: string | null) =>
      writeFileSync(path.join(dir, 'coordinator.json'), JSON.stringify({ url, pid: process.pid, certSha256, startedAt: 1 }));
    record('https://127.0.0.1:7421', 'a'.repeat(64));
    const https = await coordinatorJoin(dir, undefined);
    expect(https).toMatchObject({ token: 'j'.repeat(32), certSha256: 'a'.repeat(64), reachableFromOtherMachines: true });
    expect(https.url).toMatch(/^https:\/\/[\d.]+:7421$/);
    expect(await coordinatorJoin(dir, 'https://10.1.1.1:7421')).toMatchObject({ url: 'https://10.1.1.1:7421' });
    record('http://127.0.0.1:7421', null);
    expect(await coordinatorJoin(dir, undefined)).toMatchObject({ reachableFromOtherMachines: false });
  });
});
