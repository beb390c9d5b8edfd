// Issue 17 defect 11: the events feed tells what it left out — a cluster imported, this machine added, a held-back
// node key (once, not on every retry), a failed SSH start — and a resumed run reads right ("resumed on 2 workers", never "2 of 1").
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClusterFeature } from '../../../src-main/app/cluster-feature';
import { createSshFeature } from '../../../src-main/app/ssh-feature';
import { hardwareSnapshot } from '../helpers/snapshots';
import { newIdentity, signedJoin, startCoordinator } from '../identity/identity-fixture';
import { Harness } from './harness';

const SAMPLE = path.join(__dirname, '..', '..', 'fixtures', 'cluster', 'sample.yaml');

describe('the events feed', () => {
  let dir = '';
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  it('says when a cluster is imported (replaced or merged) and when this machine is added', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-events-feed-'));
    const events: string[] = [];
    const cluster = await createClusterFeature({
      path: path.join(dir, 'cluster.yaml'),
      hardware: () => hardwareSnapshot({ hostname: 'bench-box' }),
      refreshHardware: async () => hardwareSnapshot({ hostname: 'bench-box' }),
      emit: () => undefined,
      event: (kind, message) => events.push(`${kind}: ${message}`),
    });
    const added = await cluster.handlers.addThisMachine(undefined);
    expect(events).toEqual([`node-added: This machine added to ${path.join(dir, 'cluster.yaml')} as node ${added.nodeName}`]);
    const text = readFileSync(SAMPLE, 'utf8');
    expect(await cluster.handlers.importCluster({ fileName: 'sample.yaml', text, mode: 'merge' })).toMatchObject({ ok: true });
    expect(events.at(-1)).toMatch(/^cluster-imported: Imported sample\.yaml \(merged\): 3 nodes added \(desktop, jetson, intel-box\), 0 updated; 4 nodes now$/);
    // Issue 25 item 8: the answer (the page's banner) and the event name what Replace removed, and add nothing here.
    expect(await cluster.handlers.importCluster({ fileName: 'sample.yaml', text, mode: 'replace' })).toMatchObject({ ok: true, added: [], updated: [], removed: [added.nodeName] });
    // Issue 25 item 8: Replace named every node of the file as added; it names what it removed (this machine's).
    expect(events.at(-1)).toBe(`cluster-imported: Imported sample.yaml (replaced): 0 nodes added, 0 updated, 1 removed (${added.nodeName}); 3 nodes now`);
    // A file that is refused is not an import.
    await cluster.handlers.importCluster({ fileName: 'bad.yaml', text: 'nodes: [oops', mode: 'replace' });
    expect(events).toHaveLength(3);
  });

  it('says once that a node presented a new key and is held back, not on every retry', async () => {
    const { svc, api } = await startCoordinator();
    expect((await signedJoin(api, 'gpu-box', newIdentity('machine-old'))).status).toBe(200);
    const stranger = newIdentity('machine-new');
    expect((await signedJoin(api, 'gpu-box', stranger)).status).toBe(409);
    expect((await signedJoin(api, 'gpu-box', stranger)).status).toBe(409);
    const said = svc.events().filter((e) => e.kind === 'key-conflict');
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ severity: 'warning' });
    expect(said[0]!.message).toMatch(new RegExp(`^Node gpu-box presented a new key ${stranger.fingerprint.replace(/[+/]/g, '\\$&')} from 127\\.0\\.0\\.1 \\(pinned: SHA256:\\S+\\): held back until it is accepted in the Workers view$`));
  });

  it('a run that resumes says on how many workers, not "2 of 1 workers active"', () => {
    const h = new Harness();
    const [a, b] = h.activeWorkers('desktop', 'jetson');
    h.svc.startRun(h.spec({ minWorkers: 2, maxWorkers: 2, maxRestarts: 5 }));
    h.workers.forEach((w) => w.beat());
    h.run(6000, [a!]);
    b!.join();
    h.run(2000, [a!, b!]);
    expect(h.eventMessages('run-resumed')).toEqual(['Run "demo" resumed on 2 workers (min_workers 2, max_workers 2)']);
  });
});

describe('a failed SSH start in the events feed', () => {
  it('is told once per failure, with the cause (the same failure reported again is not news)', async () => {
    const said: string[] = [];
    const ssh = createSshFeature({
      cluster: () => ({ nodes: [{ name: 'gpu-box', host: 'gpu-box.invalid', transport: 'ssh', gpus: [], max_adapters: 1 }] }),
      coordinator: () => ({ url: 'http://127.0.0.1:7421', token: 't', certSha256: null, reachableFromOtherMachines: false }),
      emit: () => undefined,
      onStartFailed: (name, detail) => said.push(`${name}: ${detail}`),
    });
    await ssh.handlers.startNode({ name: 'gpu-box' });
    await ssh.handlers.startNode({ name: 'gpu-box' });
    await vi.waitFor(() => expect(ssh.launcher.status('gpu-box').state).toBe('failed'));
    // (Where this machine has no SSH key, the same sentence goes on to say how to make one.)
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^gpu-box: this coordinator listens on loopback only, so gpu-box could not join it: start GPU Share with --coordinator-host 0\.0\.0\.0 \(or this machine's LAN address\)/);
    ssh.stop();
  });
});
