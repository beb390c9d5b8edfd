// Sweep comparison: a job's final metrics from the metrics.json in its artifact — bounded, parsed as untrusted
// data — kept at completion and shown with the job (state and job snapshots), gone with the job when deleted.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_METRICS, MAX_METRICS_BYTES, metricNames, parseMetricsJson } from '../../../src-shared/jobs/job-metrics';
import { metricsFromTarball } from '../../../src-main/core/jobs/job-results';
import { ArtifactStore } from '../../../src-main/core/jobs/artifact-store';
import { JobService } from '../../../src-main/core/jobs/job-service';
import { formatJobDetail } from '../../../src-main/cli/commands/jobs/job-format';
import { jobSnapshot, NOW } from '../cli/jobs-fixtures';
import { Harness } from '../coordinator/harness';
import { openTemp } from '../state/temp-state';
import { handMadeTarGz } from './hand-made-tar';

describe('parseMetricsJson', () => {
  it('keeps the finite numbers of a JSON object, bounded in count, name length and size', () => {
    expect(parseMetricsJson('{"eval_loss": 1.92, "accuracy": 0.61, "note": "ok", "nested": {"a": 1}, "bad": null}')).toEqual({ eval_loss: 1.92, accuracy: 0.61 });
    expect(parseMetricsJson('[1, 2]')).toBeNull();
    expect(parseMetricsJson('not json')).toBeNull();
    expect(parseMetricsJson('{"note": "no numbers"}')).toBeNull();
    expect(parseMetricsJson(`{"a": 1, "${'x'.repeat(65)}": 2, "__proto__": 3}`)).toEqual({ a: 1 });
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`m${i}`, i]));
    expect(Object.keys(parseMetricsJson(JSON.stringify(many))!)).toHaveLength(MAX_METRICS);
    expect(parseMetricsJson(`{"a": 1, "pad": "${' '.repeat(MAX_METRICS_BYTES)}"}`)).toBeNull();
    expect(metricNames([{ eval_loss: 1, acc: 2 }, null, { acc: 3, f1: 4 }])).toEqual(['eval_loss', 'acc', 'f1']);
  });

  it('reads metrics.json (or ./metrics.json) from a tarball, skipping the rest; an oversized one is none', async () => {
    const read = (members: Parameters<typeof handMadeTarGz>[0]) => metricsFromTarball(Readable.from([handMadeTarGz(members)]));
    expect(await read([{ path: 'adapter.safetensors', body: 'weights' }, { path: 'metrics.json', body: '{"eval_loss": 2.204}' }])).toEqual({ eval_loss: 2.204 });
    expect(await read([{ path: './metrics.json', body: '{"acc": 0.5}' }])).toEqual({ acc: 0.5 });
    expect(await read([{ path: 'sub/metrics.json', body: '{"acc": 0.5}' }])).toBeNull();
    expect(await read([{ path: 'metrics.json', body: `{"a": 1, "pad": "${' '.repeat(MAX_METRICS_BYTES)}"}` }])).toBeNull();
    expect(await metricsFromTarball(Readable.from([Buffer.from('not a tarball')]))).toBeNull();
  });
});

describe('a completed job with metrics.json', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('shows its metrics in the queue and in the job, and they go when the job is deleted', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-metrics-'));
    const h = new Harness();
    h.activeWorkers('a');
    const sent: { jobId: string; token: string }[] = [];
    const coordinator = { workers: () => h.svc.workers(), runs: () => [], setJobHooks: () => undefined, queueInstruction: (_w: number, i: { kind: string; job?: { jobId: string; token: string } }) => (i.job && sent.push(i.job), true) };
    const db = openTemp(dir);
    const service = new JobService({ clock: h.clock, db, artifacts: new ArtifactStore(path.join(dir, 'artifacts')), cluster: () => ({ nodes: [] }), coordinator: coordinator as never, notify: () => undefined });
    await service.submit('m.toml', '[[jobs]]\nname = "r16-lr3e-3"\ncommand = ["train.py"]\nmodel = "tiny"\nmode = "lora"\nhyper = { lr = 0.003, r = 16 }\n');
    const claim = sent[0]!;
    const workerId = h.svc.workers()[0]!.id;
    service.started(workerId, claim.jobId, { token: claim.token, pid: 1 });
    const tarball = handMadeTarGz([{ path: 'adapter.safetensors', body: 'w' }, { path: 'metrics.json', body: '{"eval_loss": 2.204, "accuracy": 0.61}' }]);
    const sha = createHash('sha256').update(tarball).digest('hex');
    await service.upload(workerId, claim.jobId, claim.token, sha, Readable.from([tarball]), tarball.length);
    service.complete(workerId, claim.jobId, { token: claim.token, artifactSha256: sha, sizeBytes: tarball.length });
    await vi.waitFor(() => expect(service.job(claim.jobId).metrics).toEqual({ eval_loss: 2.204, accuracy: 0.61 }));
    expect(service.state().jobs[0]).toMatchObject({ metrics: { eval_loss: 2.204 }, spec: { hyper: { lr: 0.003, r: 16 } } });
    service.deleteJob(claim.jobId);
    expect(db.kv.get(`jobs.metrics.${claim.jobId}`)).toBeUndefined();
    service.stop();
  });
});

describe('jobs show', () => {
  it('prints a completed job’s metrics, and no metrics line for a job without them', () => {
    const done = jobSnapshot('r8-lr1e-3', { status: 'completed', metrics: { eval_loss: 1.92, accuracy: 0.61 } });
    expect(formatJobDetail(done, [], '', NOW)).toContain('\n  metrics     eval_loss 1.92, accuracy 0.61 (its metrics.json)\n');
    expect(formatJobDetail(jobSnapshot('plain'), [], '', NOW)).not.toContain('metrics');
  });
});
