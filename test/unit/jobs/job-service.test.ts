// The job service on a real state.db and a real artifact store, with a fake clock and a coordinator stand-in
// that records instructions: placement into slots, the claim handed out, fencing, a failed worker's claims
// returned, the stale sweep, measured VRAM steering the next placement, and what the person is told.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ClusterConfig } from '../../../src-shared/cluster/types';
import type { RunSnapshot, UserNotification, WorkerSnapshot } from '../../../src-shared/training';
import type { Instruction } from '../../../src-shared/worker-protocol';
import type { CoordinatorJobHooks } from '../../../src-main/core/coordinator/common/job-hooks';
import { ArtifactStore } from '../../../src-main/core/jobs/artifact-store';
import { JobService, REJOIN_GRACE_MS } from '../../../src-main/core/jobs/job-service';
import { isApiProblem } from '../../../src-main/core/coordinator/common/api-problem';
import { FakeClock } from '../coordinator/fake-clock';
import { runSnapshot, workerSnapshot } from '../helpers/snapshots';
import { openTemp } from '../state/temp-state';
import { handMadeTarGz, tarballOf } from './hand-made-tar';

const GPU_UUID = 'GPU-11111111-2222-3333-4444-555555555555';
const CLUSTER: ClusterConfig = {
  nodes: [
    { name: 'desk', host: 'localhost', transport: 'local', gpus: [{ uuid: GPU_UUID, type: 'rtx-4090', vram_mb: 24564, memory_type: 'discrete' }], max_adapters: 2 },
    { name: 'cpu', host: '10.0.0.5', transport: 'ssh', gpus: [], max_adapters: 1 },
  ],
};

const manifest = (jobs: string[]) => jobs.join('\n\n');
const job = (name: string, extra = '') => `[[jobs]]\nname = "${name}"\ncommand = ["train.py", "${name}"]\nmodel = "tiny-gpt"\nmode = "lora"\n${extra}`;

class FakeCoordinator {
  workerList: WorkerSnapshot[] = [
    workerSnapshot(1, { node: 'desk', gpus: [{ uuid: GPU_UUID, name: 'RTX 4090', vramTotalMb: 24564 }], backend: 'cuda', cpuCores: 16, ramMb: 65536 }),
    workerSnapshot(2, { node: 'cpu', cpuCores: 8, ramMb: 16384 }),
  ];
  runList: RunSnapshot[] = [];
  hooks: CoordinatorJobHooks | null = null;
  readonly sent: { workerId: number; instruction: Instruction }[] = [];
  workers = () => this.workerList;
  runs = () => this.runList;
  runMembersKey = () => this.runList.map((r) => `${r.id}:${r.workerIds.join('.')}`).join(',');
  queueInstruction = (workerId: number, instruction: Instruction) => (this.sent.push({ workerId, instruction }), true);
  setJobHooks = (hooks: CoordinatorJobHooks | null) => void (this.hooks = hooks);
  runJobs(workerId?: number) {
    return this.sent.flatMap((s) => (s.instruction.kind === 'runJob' && (workerId === undefined || s.workerId === workerId) ? [{ workerId: s.workerId, job: s.instruction.job }] : []));
  }
}

let dir: string;
let clock: FakeClock;
let coordinator: FakeCoordinator;
let notes: UserNotification[];
let service: JobService;
let db: ReturnType<typeof openTemp>;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-jobsvc-'));
  clock = new FakeClock();
  coordinator = new FakeCoordinator();
  notes = [];
  db = openTemp(dir);
  service = new JobService({ clock, db, artifacts: new ArtifactStore(path.join(dir, 'artifacts'), { now: () => clock.now() }), cluster: () => CLUSTER, coordinator, notify: (n) => notes.push(n) });
});

afterEach(() => {
  service.stop();
  rmSync(dir, { recursive: true, force: true });
});

function status(name: string) {
  return service.state({ offset: 0, limit: 1000, status: null }).jobs.find((j) => j.name === name)!;
}

async function upload(workerId: number, jobId: string, token: string, bytes: Buffer): Promise<string> {
  const sha = createHash('sha256').update(bytes).digest('hex');
  await service.upload(workerId, jobId, token, sha, Readable.from([bytes]), bytes.length);
  return sha;
}

function problem(fn: () => unknown): number {
  try {
    fn();
  } catch (error) {
    if (isApiProblem(error)) return error.status;
    throw error;
  }
  return 200;
}

describe('JobService', () => {
  it('places jobs into slots and VRAM budgets, hands each claim to its worker, and says why the rest wait', async () => {
    const result = await service.submit('sweep.toml', manifest([
      job('big', 'require_cuda = true\nmin_vram_gib = 16'),
      job('big2', 'require_cuda = true\nmin_vram_gib = 16'),
      job('small', 'prefer_cuda = true\nmin_vram_gib = 1'),
      job('cpu-only'),
    ]));
    expect(result).toMatchObject({ ok: true, added: expect.any(Array) });
    const sent = coordinator.runJobs();
    // desk: 20,879 MB usable — one 16 GiB job fits, not two; 2 slots. cpu: 1 slot.
    expect(sent.map((s) => `${s.job.name}@${s.workerId}`).sort()).toEqual(['big@1', 'cpu-only@2', 'small@1']);
    const big = sent.find((s) => s.job.name === 'big')!.job;
    expect(big).toMatchObject({ gpuIndex: 0, gpuUuid: GPU_UUID, command: ['train.py', 'big'], attempt: 1 });
    expect(big.env).toMatchObject({ GPU_SHARE_JOB_NAME: 'big', GPU_SHARE_MODEL: 'tiny-gpt', GPU_SHARE_MODE: 'lora', GPU_SHARE_HYPER: '{}', GPU_SHARE_SEED: '0' });
    expect(status('big2').status).toBe('pending');
    expect(status('big2').reason).toContain('desk: all 2 adapter slots held');
    expect(status('big2').reason, status('big2').reason ?? '').toMatch(/cpu: (needs CUDA|all 1 adapter slots held)/);
    const ledger = service.state().ledger.find((l) => l.node === 'desk')!;
    expect(ledger).toMatchObject({ slots: 2, slotsHeld: 2 });
    expect(ledger.gpus[0]!.heldMb).toBe(16 * 1024 + 1024);
  });

  it('fences every worker call with the current claim: a wrong worker or an old token gets 409, a beat from one is told to stop', async () => {
    await service.submit('m.toml', job('a'));
    const { workerId, job: launch } = coordinator.runJobs()[0]!;
    expect(problem(() => service.started(workerId === 1 ? 2 : 1, launch.jobId, { token: launch.token, pid: 10 }))).toBe(409);
    expect(problem(() => service.started(workerId, launch.jobId, { token: 'zzzzzzzzzzzz.9', pid: 10 }))).toBe(409);
    expect(service.started(workerId, launch.jobId, { token: launch.token, pid: 10 })).toEqual({ ok: true, status: 'running' });
    coordinator.hooks!.beats(workerId, 'x', { jobs: [{ jobId: launch.jobId, token: 'oldclaim1234.1', usedMib: null, progress: null }] });
    expect(coordinator.sent.at(-1)!.instruction).toMatchObject({ kind: 'cancelJob', jobId: launch.jobId, token: 'oldclaim1234.1' });
  });

  it('a failed worker\'s claim goes back to the queue (after the rejoin grace) and is placed again', async () => {
    await service.submit('m.toml', job('a'));
    const first = coordinator.runJobs()[0]!;
    service.started(first.workerId, first.job.jobId, { token: first.job.token, pid: 10 });
    coordinator.workerList = coordinator.workerList.map((w) => (w.id === first.workerId ? { ...w, state: 'failed', stateCause: 'no heartbeat for 5.1 s' } : w));
    clock.advance(REJOIN_GRACE_MS + 1000);
    service.tick();
    const again = coordinator.runJobs().at(-1)!;
    expect(again.workerId).not.toBe(first.workerId);
    expect(again.job).toMatchObject({ jobId: first.job.jobId, attempt: 2 });
    expect(service.jobOutput(first.job.jobId).text).toContain('no heartbeat for 5.1 s');
    // The old claim is fenced off for good.
    expect(problem(() => service.fail(first.workerId, first.job.jobId, { token: first.job.token, error: 'late', outputTail: '' }))).toBe(409);
  });

  it('sweeps a claim silent for 600 s, and a job that fails every attempt fails for good and says so once', async () => {
    await service.submit('m.toml', job('a', 'max_attempts = 2'));
    const c1 = coordinator.runJobs().at(-1)!;
    clock.advance(601_000);
    service.tick();
    const c2 = coordinator.runJobs().at(-1)!;
    expect(c2.job.attempt).toBe(2);
    service.started(c2.workerId, c2.job.jobId, { token: c2.job.token, pid: 11 });
    expect(service.fail(c2.workerId, c2.job.jobId, { token: c2.job.token, error: 'exited with code 1', outputTail: 'step 1\nValueError: bad lr\n' })).toEqual({ ok: true, status: 'failed' });
    expect(status('a').reason).toContain('exited with code 1 — ValueError: bad lr');
    expect(c1.job.token).not.toBe(c2.job.token);
    service.tick();
    const failed = notes.filter((n) => n.title.includes('failed for the last time'));
    expect(failed).toHaveLength(1);
    expect(notes.some((n) => n.title.startsWith('Jobs finished'))).toBe(true);
  });

  it('completes only with an uploaded artifact; the measured peak (+10 %) places the next job of that model', async () => {
    await service.submit('m.toml', job('first', 'require_cuda = true\nmin_vram_gib = 16'));
    const c = coordinator.runJobs()[0]!;
    service.started(c.workerId, c.job.jobId, { token: c.job.token, pid: 12 });
    coordinator.hooks!.beats(c.workerId, 'desk', { jobs: [{ jobId: c.job.jobId, token: c.job.token, usedMib: 2000, progress: { step: 3, totalSteps: 10, loss: 1.5 } }] });
    expect(status('first').progress).toEqual({ step: 3, totalSteps: 10, loss: 1.5 });
    const missing = 'f'.repeat(64);
    expect(problem(() => service.complete(c.workerId, c.job.jobId, { token: c.job.token, artifactSha256: missing, sizeBytes: 1 }))).toBe(400);
    const sha = await upload(c.workerId, c.job.jobId, c.job.token, tarballOf(Buffer.from('adapter bytes')));
    expect(service.complete(c.workerId, c.job.jobId, { token: c.job.token, artifactSha256: sha, sizeBytes: 13 })).toEqual({ ok: true, status: 'completed' });
    expect(service.artifacts().map((a) => a.sha256)).toEqual([sha]);
    // Two more of the same model now need 2,200 MB each, not 16 GiB: both fit the one GPU together.
    await service.submit('m.toml', manifest([job('first', 'require_cuda = true\nmin_vram_gib = 16'), job('second', 'require_cuda = true\nmin_vram_gib = 16'), job('third', 'require_cuda = true\nmin_vram_gib = 16')]));
    const placed = coordinator.runJobs().filter((s) => s.job.name !== 'first');
    expect(placed.map((s) => s.job.name).sort()).toEqual(['second', 'third']);
    expect(status('second').heldVramMb).toBe(2200);
  });

  it('a completed job shows the progress of the last line it printed, not the last heartbeat sample (issue 17 defect 3)', async () => {
    await service.submit('m.toml', job('r16-lr3e-3'));
    const c = coordinator.runJobs()[0]!;
    service.started(c.workerId, c.job.jobId, { token: c.job.token, pid: 12 });
    coordinator.hooks!.beats(c.workerId, 'desk', { jobs: [{ jobId: c.job.jobId, token: c.job.token, usedMib: null, progress: { step: 28, totalSteps: 40, loss: 2.309 } }] });
    const lines = Array.from({ length: 40 }, (_, s) => `GPU_SHARE_PROGRESS {"step":${s},"total_steps":40,"loss":${(2.6 - s * 0.01).toFixed(3)}}\r\nsaved\r\n`).join('');
    service.output(c.workerId, c.job.jobId, { token: c.job.token, data: lines });
    const sha = await upload(c.workerId, c.job.jobId, c.job.token, tarballOf(Buffer.from('adapter bytes')));
    service.complete(c.workerId, c.job.jobId, { token: c.job.token, artifactSha256: sha, sizeBytes: 13 });
    expect(status('r16-lr3e-3')).toMatchObject({ status: 'completed', progress: { step: 39, totalSteps: 40, loss: 2.21 } });
  });

  it('keeps one unindexed upload per claim, never removes an indexed one, and drops one never completed after the grace', async () => {
    const storedFiles = () => readdirSync(path.join(dir, 'artifacts', 'sha256'), { recursive: true }).filter((f) => String(f).endsWith('.tar.gz')).length;
    await service.submit('m.toml', manifest([job('a', 'require_cuda = true\nmin_vram_gib = 1'), job('b', 'require_cuda = true\nmin_vram_gib = 1')]));
    const [a, b] = coordinator.runJobs() as [ReturnType<typeof coordinator.runJobs>[number], ReturnType<typeof coordinator.runJobs>[number]];
    for (let i = 0; i < 5; i++) await upload(a.workerId, a.job.jobId, a.job.token, tarballOf(Buffer.from(`try ${i}`), `f${i}`));
    expect(storedFiles()).toBe(1);
    const sha = await upload(a.workerId, a.job.jobId, a.job.token, tarballOf(Buffer.from('final')));
    service.complete(a.workerId, a.job.jobId, { token: a.job.token, artifactSha256: sha, sizeBytes: 5 });
    await upload(b.workerId, b.job.jobId, b.job.token, tarballOf(Buffer.from('never completed')));
    expect(storedFiles()).toBe(2);
    clock.advance(16 * 60_000); // past the 15 min grace
    service.tick();
    expect(storedFiles()).toBe(1);
    expect(await service.openArtifact(sha)).not.toBe(null);
  });

  it('refuses to hand out an indexed tarball that was never inspected (placed in the store and index by hand), naming its member', async () => {
    const bad = handMadeTarGz([{ path: 'out', type: '5' }, { path: 'out/../../escape.sh', body: 'echo pwned' }]);
    const id = createHash('sha256').update(bad).digest('hex');
    const file = path.join(dir, 'artifacts', 'sha256', id.slice(0, 2), `${id}.tar.gz`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, bad);
    db.artifacts.record(id, bad.length, 'f'.repeat(64), 1, clock.now()); // as an index from before uploads were inspected
    const refused = await service.openArtifact(id).then(() => null, (error: unknown) => (isApiProblem(error) ? error : null));
    expect(refused?.status).toBe(422);
    expect(refused?.message).toContain(`the artifact's member "out/../../escape.sh" has '..' in its path`);
  });

  it('flags a job that uses more VRAM than it was placed on, and cancel tells its worker to stop', async () => {
    await service.submit('m.toml', job('a', 'require_cuda = true\nmin_vram_gib = 1'));
    const c = coordinator.runJobs()[0]!;
    service.started(c.workerId, c.job.jobId, { token: c.job.token, pid: 13 });
    coordinator.hooks!.beats(c.workerId, 'desk', { jobs: [{ jobId: c.job.jobId, token: c.job.token, usedMib: 4000, progress: null }] });
    expect(status('a').overBudget).toBe(true);
    service.cancel(c.job.jobId);
    expect(status('a').status).toBe('cancelled');
    expect(coordinator.sent.at(-1)).toMatchObject({ workerId: c.workerId, instruction: { kind: 'cancelJob', jobId: c.job.jobId, token: c.job.token } });
    expect(problem(() => service.cancel('0'.repeat(64)))).toBe(404);
  });

  it('an elastic run holds one slot on each member', async () => {
    coordinator.runList = [runSnapshot({ workerIds: [2] })];
    await service.submit('m.toml', job('a'));
    // The CPU node's only slot is the run's: the job goes to desk.
    expect(coordinator.runJobs()[0]!.workerId).toBe(1);
  });

  it('a job waiting for the slot a run member holds is placed on the next tick after the run frees it', async () => {
    coordinator.runList = [runSnapshot({ workerIds: [2] })];
    await service.submit('m.toml', job('a', 'allowed_hosts = ["cpu"]'));
    expect(coordinator.runJobs()).toEqual([]);
    service.tick();
    expect(coordinator.runJobs()).toEqual([]);
    coordinator.runList = []; // the run ended: nothing else changed (no worker state, no job beat)
    service.tick();
    expect(coordinator.runJobs().map((s) => s.workerId)).toEqual([2]);
  });

  it('tells the coordinator what jobs hold (not runs: it plans those itself) on the nodes cluster.yaml and the workers give', async () => {
    coordinator.runList = [runSnapshot({ workerIds: [2] })];
    await service.submit('m.toml', job('a', 'require_cuda = true\nmin_vram_gib = 1'));
    const { job: launch } = coordinator.runJobs()[0]!;
    const capacity = coordinator.hooks!.capacity!();
    expect(capacity.nodes.map((n) => [n.node, n.slots])).toEqual([['desk', 2], ['cpu', 1]]);
    expect(capacity.holdings).toEqual([expect.objectContaining({ node: 'desk', kind: 'job', id: launch.jobId, gpuIndex: 0 })]);
  });

  it('a bad manifest changes nothing and names each error\'s line', async () => {
    await service.submit('m.toml', job('a'));
    const bad = await service.submit('m.toml', '[[jobs]]\nname = "b"\ncommand = "not a list"\nmin_cores = -1\n');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors.map((e) => e.line)).toEqual(expect.arrayContaining([3, 4]));
    expect(service.state().jobs.map((j) => j.name)).toEqual(['a']);
  });

  it('a round looks at the first 256 pending jobs: one behind them waits its turn, saying how many are ahead', async () => {
    // 300 jobs no node can take (80 GiB of VRAM), then one any CPU could run.
    const huge = Array.from({ length: 300 }, (_, i) => job(`huge-${i}`, 'require_cuda = true\nmin_vram_gib = 80'));
    await service.submit('m.toml', manifest([...huge, job('tiny', 'prefer_cuda = false')]));
    expect(coordinator.runJobs()).toEqual([]);
    expect(status('huge-0').reason).toMatch(/^no node fits now: desk: needs 80 GiB VRAM/);
    expect(status('huge-255').reason).toMatch(/^no node fits now:/);
    expect(status('huge-256').reason).toBe('waiting behind 256 earlier pending jobs (each placement round looks at the first 256)');
    expect(service.job(service.state({ offset: 300, limit: 1, status: null }).jobs[0]!.id).reason).toBe('waiting behind 300 earlier pending jobs (each placement round looks at the first 256)');
    // Once the head moves (here: the first 100 cancelled), it is looked at and placed.
    for (const j of service.state({ offset: 0, limit: 100, status: null }).jobs) service.cancel(j.id);
    expect(coordinator.runJobs().map((r) => r.job.name)).toEqual(['tiny']);
  });

  it('failed workers get no verdict and do not lengthen a waiting job\'s reason', async () => {
    coordinator.workerList.push(...Array.from({ length: 50 }, (_, i) => workerSnapshot(100 + i, { node: `gone-${i}`, state: 'failed', stateCause: 'no heartbeat' })));
    await service.submit('m.toml', job('big', 'require_cuda = true\nmin_vram_gib = 80'));
    const state = service.state();
    expect(state.previews[0]!.verdicts.map((v) => v.node)).toEqual(['desk', 'cpu']);
    expect(status('big').reason).not.toContain('gone-');
  });
});

describe('JobService artifacts: delete and retention (issue 25, housekeeping)', () => {
  let events: string[];
  const storedFiles = () => readdirSync(path.join(dir, 'artifacts', 'sha256'), { recursive: true }).filter((f) => String(f).endsWith('.tar.gz')).map(String);

  beforeEach(() => {
    service.stop();
    events = [];
    const artifacts = new ArtifactStore(path.join(dir, 'artifacts'), { now: () => clock.now() });
    service = new JobService({ clock, db, artifacts, cluster: () => CLUSTER, coordinator, notify: (n) => notes.push(n), event: (kind, _severity, message) => events.push(`${kind}: ${message}`) });
  });

  /** Runs every placed job to completion with `bytes(name)` as its output; returns each job's id and sha256 by name. */
  async function completeAll(bytes: (name: string) => Buffer): Promise<Map<string, { jobId: string; sha: string }>> {
    const done = new Map<string, { jobId: string; sha: string }>();
    for (const c of coordinator.runJobs()) {
      if (status(c.job.name).status === 'completed') continue;
      const sha = await upload(c.workerId, c.job.jobId, c.job.token, tarballOf(bytes(c.job.name)));
      clock.advance(1000);
      service.complete(c.workerId, c.job.jobId, { token: c.job.token, artifactSha256: sha, sizeBytes: 1 });
      done.set(c.job.name, { jobId: c.job.jobId, sha });
    }
    return done;
  }

  it('deleting a job\'s artifact keeps bytes another job produced too; the last one removes rows and file, each an event', async () => {
    await service.submit('m.toml', manifest([job('a'), job('b')]));
    const done = await completeAll(() => Buffer.from('identical adapter'));
    const { sha } = done.get('a')!;
    expect(done.get('b')!.sha).toBe(sha);
    expect(service.artifacts()[0]!.producedBy.map((p) => p.jobName).sort()).toEqual(['a', 'b']);

    expect(service.housekeeping.delete(sha, done.get('a')!.jobId)).toEqual({ sha256: sha, removed: false, freedBytes: 0, stillUsedBy: 1 });
    expect(service.artifacts()[0]!.producedBy.map((p) => p.jobName)).toEqual(['b']);
    expect(storedFiles()).toHaveLength(1);
    expect(problem(() => service.housekeeping.delete(sha, done.get('a')!.jobId))).toBe(404);

    const last = service.housekeeping.delete(sha, done.get('b')!.jobId);
    expect(last).toMatchObject({ removed: true, stillUsedBy: 0 });
    expect(last.freedBytes).toBeGreaterThan(0);
    expect(service.artifacts()).toEqual([]);
    expect(storedFiles()).toEqual([]);
    expect(await service.openArtifact(sha)).toBe(null);
    expect(service.housekeeping.summary()).toMatchObject({ count: 0, totalBytes: 0 });
    expect(events.filter((e) => e.startsWith('artifact-deleted'))).toEqual([
      `artifact-deleted: Artifact ${sha.slice(0, 12)} of job a deleted by the operator: its bytes stay, 1 other job attempt(s) or run(s) produced them too`,
      `artifact-deleted: Artifact ${sha.slice(0, 12)} (${last.freedBytes} bytes, job b) deleted by the operator`,
    ]);
  });

  it('refuses to delete while a job that produced it runs again or while it is downloaded, naming which', async () => {
    await service.submit('m.toml', job('a'));
    const { sha, jobId } = (await completeAll(() => Buffer.from('adapter'))).get('a')!;
    service.requeue(jobId);
    expect(status('a').status).toBe('claimed');
    expect(() => service.housekeeping.delete(sha)).toThrow(`artifact ${sha.slice(0, 12)} is not deleted now: job a, which produced it, is claimed again (cancel it or wait for it to end); try again once that is done`);
    service.cancel(jobId);
    const download = (await service.openArtifact(sha))!;
    expect(() => service.housekeeping.delete(sha)).toThrow('its bytes are being downloaded');
    download.stream.destroy();
    await new Promise((resolve) => download.stream.once('close', resolve));
    expect(service.housekeeping.delete(sha)).toMatchObject({ removed: true });
    expect(storedFiles()).toEqual([]);
  });

  it('the retention rule removes the oldest beyond keepLast or over maxTotalGb, at once and after each completion, each an event', async () => {
    await service.submit('m.toml', manifest([job('a'), job('b'), job('c')]));
    const done = await completeAll((name) => Buffer.from(`adapter of ${name}`));
    const byAge = ['a', 'b', 'c'].map((n) => done.get(n)!.sha).sort((x, y) => service.artifacts().findIndex((a) => a.sha256 === y) - service.artifacts().findIndex((a) => a.sha256 === x));
    const { removed } = service.housekeeping.setRule({ keepLast: 2, maxTotalGb: null });
    expect(removed.map((r) => r.sha256)).toEqual([byAge[0]]);
    expect(removed[0]!.why).toBe('beyond the newest 2');
    expect(service.artifacts().map((a) => a.sha256)).toEqual([byAge[2], byAge[1]]);
    expect(storedFiles()).toHaveLength(2);
    expect(service.housekeeping.summary().retention).toEqual({ keepLast: 2, maxTotalGb: null });
    expect(events.filter((e) => e.startsWith('artifact-deleted')).at(-1)).toMatch(/removed by the retention rule \(keep the newest 2\): beyond the newest 2$/);

    // A new completion: the rule is enforced again, the oldest of the three goes.
    await service.submit('m.toml', manifest([job('a'), job('b'), job('c'), job('d')]));
    await completeAll(() => Buffer.from('adapter of d'));
    expect(service.artifacts()).toHaveLength(2);
    expect(service.artifacts().map((a) => a.sha256)).not.toContain(byAge[1]);

    // Size: 1 byte total is less than any one of them, so all go.
    expect(service.housekeeping.setRule({ keepLast: null, maxTotalGb: 1e-9 }).removed.map((r) => r.why)).toEqual(['over 1e-9 GB', 'over 1e-9 GB']);
    expect(storedFiles()).toEqual([]);
  });
});
