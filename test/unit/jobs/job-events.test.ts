// Issue 17 defect 11: the events feed tells the job queue's story — a manifest taken, each job started,
// completed, failed (to be tried again, then for good) and cancelled — through the sink the app wires to the
// coordinator's events.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ClusterConfig } from '../../../src-shared/cluster/types';
import type { Instruction } from '../../../src-shared/worker-protocol';
import type { CoordinatorJobHooks } from '../../../src-main/core/coordinator/common/job-hooks';
import { ArtifactStore } from '../../../src-main/core/jobs/artifact-store';
import { JobService } from '../../../src-main/core/jobs/job-service';
import { FakeClock } from '../coordinator/fake-clock';
import { workerSnapshot } from '../helpers/snapshots';
import { openTemp } from '../state/temp-state';
import { tarballOf } from './hand-made-tar';

const CLUSTER: ClusterConfig = { nodes: [{ name: 'cpu', host: '10.0.0.5', transport: 'ssh', gpus: [], max_adapters: 2 }] };
const job = (name: string, extra = '') => `[[jobs]]\nname = "${name}"\ncommand = ["train.py", "${name}"]\nmodel = "tiny-gpt"\nmode = "lora"\n${extra}`;

let dir: string;
let sent: { workerId: number; instruction: Instruction }[];
let events: string[];
/** The job and node each event was about (issue 25: the Events view links and filters by them). */
let abouts: unknown[];
let service: JobService;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-jobevents-'));
  sent = [];
  events = [];
  abouts = [];
  const clock = new FakeClock();
  const coordinator = {
    workers: () => [workerSnapshot(2, { node: 'cpu', cpuCores: 8, ramMb: 16384 })],
    runs: () => [],
    queueInstruction: (workerId: number, instruction: Instruction) => (sent.push({ workerId, instruction }), true),
    setJobHooks: (_hooks: CoordinatorJobHooks | null) => undefined,
  };
  service = new JobService({
    clock,
    db: openTemp(dir),
    artifacts: new ArtifactStore(path.join(dir, 'artifacts'), { now: () => clock.now() }),
    cluster: () => CLUSTER,
    coordinator,
    notify: () => undefined,
    event: (kind, severity, message, about) => (events.push(`${kind} ${severity}: ${message}`), abouts.push(about)),
  });
});

afterEach(() => {
  service.stop();
  rmSync(dir, { recursive: true, force: true });
});

const launches = () => sent.flatMap((s) => (s.instruction.kind === 'runJob' ? [s.instruction.job] : []));

describe('job events', () => {
  it('a manifest taken, a start, a completion, a retried and a final failure, a cancel', async () => {
    const taken = await service.submit('sweep.toml', [job('ok'), job('bad', 'max_attempts = 2')].join('\n\n'));
    expect(taken, JSON.stringify(taken)).toMatchObject({ ok: true });
    expect(events).toEqual(['jobs-submitted info: Manifest sweep.toml taken: 2 new, 0 kept, 0 no longer in it']);
    const [ok, bad] = ['ok', 'bad'].map((n) => launches().find((j) => j.name === n)!);
    service.started(2, ok!.jobId, { token: ok!.token, pid: 10 });
    expect(events.at(-1)).toBe('job-started info: Job ok started on cpu (CPU): attempt 1 of 3');
    expect(abouts).toEqual([undefined, { jobId: ok!.jobId, node: 'cpu' }]);
    const bytes = tarballOf(Buffer.from('adapter'));
    const sha = createHash('sha256').update(bytes).digest('hex');
    await service.upload(2, ok!.jobId, ok!.token, sha, Readable.from([bytes]), bytes.length);
    service.complete(2, ok!.jobId, { token: ok!.token, artifactSha256: sha, sizeBytes: bytes.length });
    expect(events.at(-1)).toBe(`job-finished info: Job ok completed on cpu: artifact ${sha.slice(0, 12)} (${bytes.length} bytes)`);

    service.started(2, bad!.jobId, { token: bad!.token, pid: 11 });
    service.fail(2, bad!.jobId, { token: bad!.token, error: 'exit code 1', outputTail: 'Traceback\nValueError: nan loss\n' });
    expect(events.at(-1)).toBe('job-failed warning: Job bad attempt 1 on cpu failed: exit code 1 — ValueError: nan loss — it will be tried again');
    const again = launches().filter((j) => j.name === 'bad').at(-1)!;
    service.started(2, again.jobId, { token: again.token, pid: 12 });
    service.fail(2, again.jobId, { token: again.token, error: 'exit code 1', outputTail: '' });
    expect(events.at(-1)).toBe('job-failed error: Job bad attempt 2 on cpu failed: exit code 1 — no attempts left (2 of 2)');
    expect(abouts.at(-1)).toEqual({ jobId: bad!.jobId, node: 'cpu' });

    await service.submit('more.toml', [job('ok'), job('bad', 'max_attempts = 2'), job('late')].join('\n\n'));
    const late = service.state().jobs.find((j) => j.name === 'late')!;
    service.cancel(late.id);
    service.cancel(late.id); // already cancelled: nothing new to tell
    expect(events.filter((e) => e.startsWith('job-cancelled'))).toEqual([`job-cancelled info: Job late cancelled by operator (it was ${late.status})`]);
    expect(abouts.at(-1)).toMatchObject({ jobId: late.id });
  });
});
