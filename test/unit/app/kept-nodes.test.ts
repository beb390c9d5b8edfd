/**
 * The kept SSH nodes survive a restart of the app: each change is written to <userData>/ssh-kept-nodes.json and a
 * new store reads it back; a broken file is one warning and an empty list, never a crash. The launcher reports a
 * kept node (offline, "kept") before anything was started from this app, and after a restart.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KEPT_NODES_FILE, keptNodesFile } from '../../../src-main/app/kept-nodes';
import { NodeLauncher } from '../../../src-main/core/ssh/node-launcher';

const dir = mkdtempSync(path.join(tmpdir(), 'gs-kept-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kept SSH nodes', () => {
  it('are written on each change and read back by the next app', () => {
    const first = keptNodesFile(dir);
    expect(first.list()).toEqual([]);
    first.set('gpu-box', true);
    first.set('attic', true);
    first.set('gpu-box', true);
    first.set('attic', false);
    expect(first.list()).toEqual(['gpu-box']);
    expect(JSON.parse(readFileSync(path.join(dir, KEPT_NODES_FILE), 'utf8'))).toEqual({ kept: ['gpu-box'] });
    expect(statSync(path.join(dir, KEPT_NODES_FILE)).mode & 0o777).toBe(0o600);
    expect(keptNodesFile(dir).list()).toEqual(['gpu-box']);
  });

  it('a broken file: one warning that names it, and no node kept', () => {
    const broken = mkdtempSync(path.join(dir, 'broken-'));
    writeFileSync(path.join(broken, KEPT_NODES_FILE), '{"kept": "gpu-box"');
    const warnings: string[] = [];
    expect(keptNodesFile(broken, (m) => warnings.push(m)).list()).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(path.join(broken, KEPT_NODES_FILE));
    expect(warnings[0]).toMatch(/start one "and keep" again/);
  });

  it('the launcher lists a kept node as kept and offline after a restart, and its Stop is known to ask', () => {
    const launcher = new NodeLauncher({
      cluster: () => ({ nodes: [{ name: 'gpu-box', host: 'gpu-box.invalid', transport: 'ssh', gpus: [], max_adapters: 1 }] }),
      coordinator: () => ({ url: 'https://192.0.2.7:7421', token: 't', certSha256: null, reachableFromOtherMachines: true }),
      bundle: () => {
        throw new Error('not built');
      },
      onChange: () => undefined,
      kept: keptNodesFile(dir),
    });
    expect(launcher.statuses()).toEqual([{ name: 'gpu-box', state: 'offline', detail: 'kept: installed as a service there; not started from this app since it opened', kept: true }]);
    expect(launcher.status('other')).toEqual({ name: 'other', state: 'offline', detail: 'not started from this app' });
  });
});
