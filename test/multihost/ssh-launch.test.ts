/**
 * Workers of `transport: ssh` nodes started and stopped over SSH, against a real OpenSSH server (sshd) on host B
 * with its own host key, authorized_keys and a throwaway client key and known_hosts; the app's coordinator on
 * host A. Every refusal (no key, unknown or changed host key, wrong user, no Python) says why and changes
 * nothing on B; a start installs the agent, which joins and is active; its output streams back; the token is in
 * no process's argv; stop leaves nothing running on B.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeConfig } from '../../src-shared/cluster/types';
import type { NodeSshStatus } from '../../src-shared/nodes/ipc-ssh';
import { addKnownHost } from '../../src-main/core/ssh/known-hosts';
import { NodeLauncher } from '../../src-main/core/ssh/node-launcher';
import { MARKER_ENV } from '../../src-main/core/ssh/remote-worker';
import type { AgentBundle } from '../../src-main/core/ssh/remote-install';
import { waitFor } from '../integration/helpers/wait';
import { canRunApp, required } from './helpers/can-make-hosts';
import { startApp, stopTestbed, TRAINER, type Testbed } from './helpers/testbed';
import { appBuild } from './helpers/app-snapshot';
import { bundleShippedAgent, makeClientSshDir, pathWithout, publicKeyBlob, sockVia, startSshd, type Sshd } from './helpers/sshd';

const NO_PYTHON_PORT = 2222;

function node(name: string, host: string, user = 'root'): NodeConfig {
  return { name, host, transport: 'ssh', user, gpus: [], max_adapters: 1 };
}

/** Every process's command line on the machine (the namespace hosts share its pid space). */
function allCmdlines(): { pid: number; cmdline: string }[] {
  const out: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      out.push({ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch {
      // Ended while we looked.
    }
  }
  return out;
}

function markedPids(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`${MARKER_ENV}=${marker}`)) pids.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return pids;
}

/** Running, not a zombie: the agent's parent shell is gone, so it waits for init to reap it once it ends. */
function alive(pid: number): boolean {
  try {
    return !/^\S+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe.skipIf(!required(canRunApp(), 'the SSH launcher cases'))('workers started over SSH on a real sshd', () => {
  let tb: Testbed | null = null;
  let dir = '';
  let sshd: Sshd;
  let noPython: Sshd;
  let clientDir = '';
  let bundle: AgentBundle;
  const seen: NodeSshStatus[] = [];

  const launcher = (nodes: NodeConfig[], sshDir = clientDir) =>
    new NodeLauncher({
      cluster: () => ({ nodes }),
      coordinator: () => ({ url: tb!.app.join.url.origin, token: tb!.app.join.token, certSha256: tb!.app.join.certSha256, reachableFromOtherMachines: true }),
      bundle: () => bundle,
      onChange: (s) => seen.push(s),
      // As the app's own launcher does: the key read over SSH is approved before the agent joins.
      approveKey: async (name, key) => void (await tb!.app.api.request('POST', `/v1/nodes/${name}/approve`, { fingerprint: key.fingerprint, publicKey: key.publicKey })),
      env: {},
      sshDir,
      stopGraceS: 15,
      openSock: (n) => sockVia(tb!.cluster.host('a'), n.host, n.name.endsWith('-nopy') ? NO_PYTHON_PORT : 22),
    });
  const bHome = () => sshd.home;
  const knownHosts = () => readFileSync(path.join(clientDir, 'known_hosts'), 'utf8');

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gs-ssh-'));
    tb = await startApp({ hosts: ['a', 'b'], app: { localWorker: false } });
    clientDir = makeClientSshDir(path.join(dir, 'client'));
    const b = tb.cluster.host('b');
    sshd = await startSshd(b, path.join(dir, 'server'), { authorizedKeys: [path.join(clientDir, 'id_ed25519.pub')] });
    noPython = await startSshd(b, path.join(dir, 'server'), {
      port: NO_PYTHON_PORT,
      authorizedKeys: [path.join(clientDir, 'id_ed25519.pub')],
      hostKey: path.join(dir, 'server', 'ssh_host_ed25519_key'),
      path: pathWithout(path.join(dir, 'nopython-bin'), /^python/),
    });
    mkdirSync(path.join(dir, 'bundle'));
    bundle = await bundleShippedAgent(path.join(dir, 'bundle'));
  }, 180_000);

  afterAll(async () => {
    if (tb) {
      await sshd?.proc.stop(2_000);
      await noPython?.proc.stop(2_000);
      await stopTestbed(tb);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('no key: refused before connecting, with the commands that make and install one', async () => {
    const empty = path.join(dir, 'empty-ssh');
    mkdirSync(empty);
    const s = await launcher([node('nodeb', tb!.cluster.host('b').address)], empty).start('nodeb');
    expect(s.state).toBe('failed');
    expect(s.detail).toMatch(/no SSH key .*ssh-keygen -t ed25519.*ssh-copy-id root@/);
    expect(readdirSync(bHome())).toEqual([]);
  });

  it('unknown host key: its fingerprint is shown and nothing happens until the person accepts', async () => {
    const s = await launcher([node('nodeb', tb!.cluster.host('b').address)]).start('nodeb');
    expect(s.state).toBe('awaiting-host-key');
    expect(s.fingerprint).toBe(sshd.fingerprint);
    expect(s.detail).toContain(sshd.fingerprint);
    expect(knownHosts()).toBe('');
    expect(readdirSync(bHome())).toEqual([]);
  });

  it('refusing the key leaves it unknown and B untouched', async () => {
    const l = launcher([node('nodeb', tb!.cluster.host('b').address)]);
    await l.start('nodeb');
    const s = await l.answerHostKey('nodeb', sshd.fingerprint, false);
    expect(s.state).toBe('failed');
    expect(knownHosts()).toBe('');
    expect(readdirSync(bHome())).toEqual([]);
  });

  it('changed host key: refused loudly, known_hosts and B unchanged', async () => {
    const other = path.join(dir, 'other-host-key');
    makeClientSshDir(other);
    const address = tb!.cluster.host('b').address;
    const forged = `${address} ssh-ed25519 ${publicKeyBlob(path.join(other, 'id_ed25519.pub')).toString('base64')}\n`;
    const changedDir = path.join(dir, 'changed');
    makeClientSshDir(changedDir);
    writeFileSync(path.join(changedDir, 'known_hosts'), forged);
    const s = await launcher([node('nodeb', address)], changedDir).start('nodeb');
    expect(s.state).toBe('failed');
    expect(s.detail).toMatch(/HOST KEY OF root@.* HAS CHANGED/);
    expect(s.detail).toContain('line 1');
    expect(s.detail).toContain(sshd.fingerprint);
    expect(readFileSync(path.join(changedDir, 'known_hosts'), 'utf8')).toBe(forged);
    expect(readdirSync(bHome())).toEqual([]);
  });

  it('accepting the key records it; a wrong user is then refused by the server with what to check', async () => {
    const address = tb!.cluster.host('b').address;
    const l = launcher([node('nodeb', address, 'nosuchuser')]);
    const asked = await l.start('nodeb');
    expect(asked.state).toBe('awaiting-host-key');
    const s = await l.answerHostKey('nodeb', asked.fingerprint!, true);
    expect(s.state).toBe('failed');
    expect(s.detail).toMatch(/nosuchuser@.* refused every key .*user in cluster\.yaml.*ssh-copy-id/);
    // The key was accepted before the login failed, as OpenSSH does.
    expect(knownHosts()).toContain(`${address} ssh-ed25519 ${sshd.hostKey.toString('base64')}`);
    expect(readdirSync(bHome())).toEqual([]);
  });

  it('no Python on the PATH: named with the command that fixes it, nothing installed or started', async () => {
    const s = await launcher([node('nodeb-nopy', tb!.cluster.host('b').address)]).start('nodeb-nopy');
    expect(s.state).toBe('failed');
    expect(s.detail).toMatch(/Python 3 is not on the PATH.*apt-get install python3 python3-torch/);
    expect(existsSync(path.join(noPython.home, '.gpu-share'))).toBe(false);
  });

  it('start: installs the agent, which joins and is active; output streams; the token is in no argv; stop ends everything', async () => {
    const address = tb!.cluster.host('b').address;
    // Trusted by the case before (kept so this case also runs alone).
    if (!knownHosts().includes(sshd.hostKey.toString('base64'))) await addKnownHost(path.join(clientDir, 'known_hosts'), address, 22, sshd.hostKey);
    const l = launcher([node('nodeb', address)]);
    const started = await l.start('nodeb');
    expect(started.state, started.detail).toBe('starting');
    const online = await waitFor('nodeb online', () => (l.status('nodeb').state === 'online' ? l.status('nodeb') : l.status('nodeb').state === 'failed' ? (() => { throw new Error(l.status('nodeb').detail); })() : null), { timeoutMs: 60_000 });
    expect(online.detail).toMatch(/joined as worker \d+/);
    expect(online.output).toMatch(/worker ready: id=\d+ node=nodeb/);
    await tb!.app.waitForState('nodeb active', (st) => st.workers.some((w) => w.node === 'nodeb' && w.state === 'active'), 30_000);

    const run = path.join(bHome(), '.gpu-share', 'nodes', 'nodeb');
    const pgid = Number(readFileSync(path.join(run, 'agent.pid'), 'utf8'));
    const marker = readFileSync(path.join(run, 'marker'), 'utf8').trim();
    expect(alive(pgid)).toBe(true);
    expect(markedPids(marker)).toContain(pgid);
    expect(existsSync(path.join(run, 'token')), 'the token file is deleted once read').toBe(false);
    const leaks = allCmdlines().filter((p) => p.cmdline.includes(tb!.app.join.token) && p.pid !== tb!.app.proc.pid);
    expect(leaks.map((p) => `${p.pid}: ${p.cmdline.slice(0, 200)}`)).toEqual([]);
    expect(readFileSync(`/proc/${pgid}/cmdline`, 'utf8')).toContain('gpu-share-agent.cjs');
    // A second start finds it running instead of starting another.
    expect((await launcher([node('nodeb', tb!.cluster.host('b').address)]).start('nodeb')).detail).not.toMatch(/failed/);

    // Training on B (torchrun over pipes: the copied agent has no node-pty) carries the marker too.
    const training = await tb!.app.startRun({ name: 'over-ssh', command: [TRAINER, '--steps', '400', '--step-sleep', '0.1'], samples: 400, minWorkers: 1, maxWorkers: 1 });
    const trainer = await waitFor('training to run on B under the agent', () => {
      const py = markedPids(marker).filter((pid) => /python|torchrun/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8')));
      return py.length > 0 ? py : null;
    }, { timeoutMs: 60_000, describe: () => `agent output:\n${l.status('nodeb').output ?? ''}` });
    await waitFor('the start of training in the streamed output', () => /started run/.test(l.status('nodeb').output ?? ''), { timeoutMs: 10_000 });

    const stopped = await l.stop('nodeb');
    expect(stopped.state, stopped.detail).toBe('offline');
    expect(stopped.detail).toMatch(/^stopped/);
    expect(alive(pgid)).toBe(false);
    expect(markedPids(marker)).toEqual([]);
    expect(trainer.filter(alive)).toEqual([]);
    expect(l.status('nodeb').output).toMatch(/received SIGTERM: stopping training/);
    await tb!.app.stopRun(training.id).catch(() => undefined);
    await tb!.app.waitForState('nodeb gone', (st) => !st.workers.some((w) => w.node === 'nodeb' && w.state === 'active'), 30_000);
    l.close();
  }, 180_000);

  it('the CLI on A: nodes start (host key given on the command line), status, stop', async () => {
    const a = tb!.cluster.host('a');
    const cliHome = path.join(dir, 'cli-home');
    makeClientSshDir(path.join(cliHome, '.ssh'));
    // The CLI's own key: B must accept it too, so it is added to B's authorized_keys.
    writeFileSync(path.join(dir, 'server', 'authorized_keys'), readFileSync(path.join(cliHome, '.ssh', 'id_ed25519.pub')), { flag: 'a' });
    const clusterFile = path.join(dir, 'cli-cluster.yaml');
    writeFileSync(clusterFile, `nodes:\n  - name: nodeb\n    host: ${tb!.cluster.host('b').address}\n    transport: ssh\n    user: root\n    gpus: []\n    max_adapters: 1\n`);
    const cliPath = (await appBuild()).cli;
    const cli = (args: string[]) =>
      a.run(['env', `HOME=${cliHome}`, `PATH=${process.env.PATH}`, `GPU_SHARE_AGENT_BUNDLE=${bundle.file}`, `GPU_SHARE_ASSETS=${bundle.assetsDir}`, process.execPath, cliPath, 'nodes', ...args, '--cluster', clusterFile, '--data-dir', tb!.app.dataDir], 120_000);
    const refused = cli(['start', 'nodeb', '--json']);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain(`--accept-host-key ${sshd.fingerprint}`);
    const started = cli(['start', 'nodeb', '--accept-host-key', sshd.fingerprint]);
    expect(started.code, started.out).toBe(0);
    expect(started.out).toMatch(/nodeb: online — joined as worker \d+/);
    await tb!.app.waitForState('nodeb active (CLI)', (st) => st.workers.some((w) => w.node === 'nodeb' && w.state === 'active'), 30_000);
    const status = cli(['status', '--all', '--json']);
    expect(status.code, status.out).toBe(0);
    expect(JSON.parse(status.out)).toMatchObject([{ name: 'nodeb', state: 'online' }]);
    const stopped = cli(['stop', 'nodeb']);
    expect(stopped.code, stopped.out).toBe(0);
    expect(stopped.out).toMatch(/nodeb: offline — stopped/);
    expect(JSON.parse(cli(['status', 'nodeb', '--json']).out)).toMatchObject([{ name: 'nodeb', state: 'offline' }]);

    // start --keep: worker install over SSH (no systemd runs on B: the unit is written, the CLI starts the worker);
    // stop --uninstall removes the unit again. Both recorded where the app reads its kept nodes.
    const unit = path.join(bHome(), '.config', 'systemd', 'user', 'gpu-share-worker.service');
    const kept = cli(['start', 'nodeb', '--keep']);
    expect(kept.code, kept.out).toBe(0);
    expect(kept.out).toMatch(/nodeb: online — joined as worker \d+; service installed but not started there: .*The app started the worker over SSH instead/);
    expect(readFileSync(unit, 'utf8')).not.toContain(tb!.app.join.token);
    expect(JSON.parse(readFileSync(path.join(tb!.app.dataDir, 'ssh-kept-nodes.json'), 'utf8'))).toEqual({ kept: ['nodeb'] });
    const removed = cli(['stop', 'nodeb', '--uninstall']);
    expect(removed.code, removed.out).toBe(0);
    expect(removed.out).toMatch(/nodeb: offline — stopped; service uninstalled/);
    expect(existsSync(unit)).toBe(false);
    expect(JSON.parse(readFileSync(path.join(tb!.app.dataDir, 'ssh-kept-nodes.json'), 'utf8'))).toEqual({ kept: [] });
  }, 360_000);
});

