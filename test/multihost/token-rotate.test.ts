/**
 * Join-token rotation across hosts (issue 14, item 1): A serves, B joins and is approved. The operator replaces
 * the join token; B's agent, which still holds the old one, leaves and joins again and is let in (its key is
 * approved); C, a new machine, is refused with the old token — saying the token was replaced — and joins with
 * the new one. secrets.json on A keeps the new token and the old one as retired.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { productEnv } from './helpers/app';
import { appBuild } from './helpers/app-snapshot';
import { canRunApp, required } from './helpers/can-make-hosts';
import type { HostProcess } from './helpers/host-process';
import { repoRoot } from './helpers/paths';
import { startApp, startWorker, stopTestbed, waitForActive, type Testbed } from './helpers/testbed';

const READY = /^worker ready: id=(\d+) node=(\S+)/;

describe.skipIf(!required(canRunApp(), 'the token rotation case'))('replacing the join token', () => {
  let tb: Testbed | null = null;
  const extra: HostProcess[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'gsmh-rotate-'));

  beforeAll(async () => {
    tb = await startApp({ hosts: ['a', 'b', 'c'], app: { localWorker: false, autoApprove: true } });
  }, 120_000);

  afterAll(async () => {
    for (const p of extra) await p.stop(10_000);
    if (tb) {
      const left = await stopTestbed(tb);
      expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** `gpu-share worker` on C with this token. */
  const workerOnC = async (token: string, dataDir: string): Promise<HostProcess> => {
    const app = tb!.app;
    const argv = [process.execPath, (await appBuild()).cli, 'worker', '--join', app.join.url.origin, ...(app.join.certSha256 ? ['--cert-sha256', app.join.certSha256] : []), '--data-dir', dataDir];
    const proc = tb!.cluster.host('c').spawn(argv, { env: await productEnv({ GPU_SHARE_JOIN_TOKEN: token }), cwd: repoRoot, label: 'c:worker' });
    tb!.tracker.addRoot(proc.pid);
    extra.push(proc);
    return proc;
  };

  it('keeps the approved machine working on the old token, and lets a new one in only with the new token', async () => {
    const old = tb!.app.join.token;
    // Its own data folder (node key, machine id), kept across the restart below.
    const b = await startWorker(tb!, 'b', { dataDir: path.join(dir, 'b') });
    await b.ready();
    await waitForActive(tb!, [b.name], false, 30_000);

    const { joinToken } = await tb!.app.api.request<{ joinToken: string }>('POST', '/v1/join-token/rotate');
    expect(joinToken).not.toBe(old);
    const secrets = JSON.parse(readFileSync(path.join(tb!.app.dataDir, 'secrets.json'), 'utf8')) as { joinToken: string; retiredJoinTokens: string[] };
    expect(secrets).toMatchObject({ joinToken, retiredJoinTokens: [old] });

    // B's agent still holds the old token: it leaves, starts again from its data folder and is let back in.
    await b.proc.stop(15_000); // not close(): that removes the data folder, and with it the node key
    const again = await startWorker(tb!, 'b', { dataDir: b.dataDir });
    await again.ready();
    await waitForActive(tb!, [b.name], false, 30_000);

    // C is new: the old token is refused with a sentence that says why, before anything of C is admitted.
    const refused = await workerOnC(old, path.join(dir, 'c-old'));
    const exit = await Promise.race([refused.exited, new Promise<null>((r) => setTimeout(() => r(null), 30_000))]);
    const said = refused.lines.map((l) => l.text).join('\n');
    expect(exit?.code, said).toBe(1);
    expect(said).toMatch(/was replaced \(gpu-share token rotate\) and lets in only machines already approved; host-c is not one/);
    expect((await tb!.app.state()).workers.map((w) => w.node)).not.toContain('host-c');

    // With the new token it joins.
    const joined = await workerOnC(joinToken, path.join(dir, 'c-new'));
    await joined.waitForLine(READY, 60_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${joined.tail(20)}`);
    });
    await waitForActive(tb!, ['host-c', b.name], false, 30_000);
  }, 240_000);
});
