/**
 * The adapter-job promise across machines: the example sweep of 8 LoRA adapters, submitted to the app on host
 * A, fills the slots of three workers of different capability on hosts B, C and D — B with three GPUs and 3
 * slots, C CPU-only, D one GPU and `max_adapters: 1` — each job only where it may run and never more at once on
 * a node than its slots. D's agent is SIGKILLed while it trains one; that job goes back to the queue and
 * completes elsewhere. Every adapter downloads and loads back with the trainer's own loader, and a re-run of
 * one job gives the same bytes, stored once. The GPUs are nvidia-smi captures (no GPU here); the training is real.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArtifactSnapshot, JobsState, ManifestSubmitResult } from '../../src-shared/jobs/types';
import { TORCH_PYTHON } from '../integration/helpers/agent-handle';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { FAKE_BIN, fixture } from '../unit/hardware/fake-env';
import { canRunApp, required } from './helpers/can-make-hosts';
import type { Cluster } from './helpers/hosts';
import { assetsDir } from './helpers/paths';
import { startTestbed, stopTestbed, type Testbed } from './helpers/testbed';

const SWEEP = path.join(assetsDir, 'examples', 'lora-sweep.toml');
const VERIFY = path.join(assetsDir, 'trainers', 'lora_trainer.py');
const X3_UUIDS = ['GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b', 'GPU-68988cf6-8de9-6585-a263-d2e3ea96b75a', 'GPU-90e3dab0-b59d-8bf6-d909-d4fab8d2f29b'];
const RTX2080_UUID = 'GPU-22b2c6ac-2d49-4863-197c-9c469071178a';
const RTX2080_FIELDS =
  'power.limit,power.min_limit,power.max_limit,memory.total,vbios_version,driver_version,name,gpu_uuid,power.draw,temperature.gpu,temperature.memory,clocks.current.graphics,clocks.sm,clocks.mem,utilization.gpu,utilization.memory,fan.speed,pcie.link.width.current,pstate';

const SLOTS: Record<string, number> = { b: 3, c: 2, d: 1 };

function clusterYaml(cluster: Cluster): string {
  const name = (h: string) => cluster.host(h).hostname;
  const addr = (h: string) => cluster.host(h).address;
  const gpu = (uuid: string, mb: number) => `      - { uuid: ${uuid}, type: test-gpu, vram_mb: ${mb}, memory_type: discrete }`;
  return [
    'nodes:',
    `  - name: ${name('b')}`,
    `    host: ${addr('b')}`,
    '    transport: ssh',
    '    gpus:',
    gpu(X3_UUIDS[0]!, 8119),
    gpu(X3_UUIDS[1]!, 4043),
    gpu(X3_UUIDS[2]!, 8119),
    `    max_adapters: ${SLOTS.b}`,
    `  - name: ${name('c')}`,
    `    host: ${addr('c')}`,
    '    transport: ssh',
    '    gpus: []',
    `    max_adapters: ${SLOTS.c}`,
    `  - name: ${name('d')}`,
    `    host: ${addr('d')}`,
    '    transport: ssh',
    '    gpus:',
    gpu(RTX2080_UUID, 7979),
    `    max_adapters: ${SLOTS.d}`,
    '',
  ].join('\n');
}

const fakeGpus = (capture: string, fields?: string): NodeJS.ProcessEnv => ({
  PATH: `${FAKE_BIN}:${process.env.PATH ?? ''}`,
  FAKE_NVIDIA_SMI_QUERY_GPU: fixture(capture),
  ...(fields ? { FAKE_NVIDIA_SMI_QUERY_GPU_FIELDS: fields } : {}),
});

describe.skipIf(!required(canRunApp(), 'the multihost adapter-job sweep'))('an 8-adapter sweep over three hosts', () => {
  let tb: Testbed | null = null;
  const scratch = mkdtempSync(path.join(tmpdir(), 'gsmh-sweep-'));

  beforeAll(async () => {
    tb = await startTestbed({
      hosts: ['a', 'b', 'c', 'd'],
      app: (cluster) => ({ localWorker: false, autoApprove: true, clusterYaml: clusterYaml(cluster) }),
      workers: [
        { host: 'b', opts: { env: fakeGpus('query-gpu-csv-header-units-consumer-x3.txt') } },
        { host: 'c' },
        { host: 'd', opts: { env: fakeGpus('query-gpu-csv-noheader-nounits-rtx2080-drv440.txt', RTX2080_FIELDS) } },
      ],
    });
  }, 180_000);

  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it('places every job where it fits, within slots, survives a killed worker, and every adapter loads back', async () => {
    const { app, cluster, workers } = tb!;
    const nodeOf = (h: string) => cluster.host(h).hostname;
    const hostOfNode = new Map(['b', 'c', 'd'].map((h) => [nodeOf(h), h]));
    const submitted = await app.api.request<ManifestSubmitResult>('POST', '/v1/jobs/manifest', { fileName: SWEEP, text: readFileSync(SWEEP, 'utf8') });
    expect(submitted.ok, JSON.stringify(submitted)).toBe(true);
    if (!submitted.ok) return;
    expect(submitted.added).toHaveLength(8);

    // Watch the queue: at no moment more jobs on a node than its slots, and each job only where it may run.
    const maxBusy = new Map<string, number>();
    let killedJob: string | null = null;
    const final = await app.api.request<JobsState>('GET', '/v1/jobs').then(() =>
      waitJobs(tb!, (s) => {
        const busy = new Map<string, number>();
        for (const job of s.jobs) {
          if ((job.status === 'claimed' || job.status === 'running') && job.node) {
            busy.set(job.node, (busy.get(job.node) ?? 0) + 1);
            const host = hostOfNode.get(job.node);
            expect(host, `job ${job.name} on an unknown node ${job.node}`).toBeDefined();
            if (job.spec.requireCuda) expect(host, `${job.name} needs CUDA but went to ${job.node}`).not.toBe('c');
            if (job.spec.allowedHosts) expect(job.spec.allowedHosts).toContain(job.node);
          }
        }
        for (const [node, n] of busy) {
          maxBusy.set(node, Math.max(maxBusy.get(node) ?? 0, n));
          expect(n, `${node} ran ${n} jobs at once`).toBeLessThanOrEqual(SLOTS[hostOfNode.get(node)!]!);
        }
        for (const l of s.ledger) expect(l.slotsHeld, `ledger of ${l.node}`).toBeLessThanOrEqual(l.slots);
        // Kill D's agent while it trains one job: that job must come back and finish elsewhere.
        const onD = s.jobs.find((j) => j.status === 'running' && j.node === nodeOf('d') && (j.progress?.step ?? 0) > 0);
        if (!killedJob && onD) {
          killedJob = onD.id;
          workers.get('d')!.proc.kill('SIGKILL');
        }
        return s.counts.completed + s.counts.failed + s.counts.cancelled === s.counts.total ? s : null;
      }, 420_000),
    );
    const describeJobs = final.jobs.map((j) => `${j.name}: ${j.status} on ${j.node} after ${j.attempts} (${j.reason ?? ''})`).join('\n');
    expect(final.counts.completed, describeJobs).toBe(8);
    expect(killedJob, 'D trained a job before the sweep ended').not.toBeNull();
    const moved = final.jobs.find((j) => j.id === killedJob)!;
    expect(moved.attempts, `the killed job was tried again: ${describeJobs}`).toBe(2);
    expect(moved.node).not.toBe(nodeOf('d'));
    expect([...maxBusy.keys()].sort(), 'every worker took work').toEqual(['b', 'c', 'd'].map(nodeOf).sort());

    // Every adapter downloads, matches its hash, and loads back with the trainer's own loader.
    const artifacts = (await app.api.request<{ artifacts: ArtifactSnapshot[] }>('GET', '/v1/artifacts')).artifacts;
    for (const job of final.jobs) {
      const bytes = await app.api.requestBytes(`/v1/artifacts/${job.artifact!}`);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(job.artifact);
      const dir = path.join(scratch, job.id.slice(0, 12));
      const tarball = `${dir}.tar.gz`;
      writeFileSync(tarball, bytes);
      execFileSync('mkdir', ['-p', dir]);
      execFileSync('tar', ['-xzf', tarball, '-C', dir]);
      const verified = JSON.parse(execFileSync(TORCH_PYTHON, [VERIFY, '--verify', dir], { encoding: 'utf8' }).trim().split('\n').at(-1)!) as { ok: boolean };
      expect(verified.ok, `${job.name}'s adapter loads`).toBe(true);
    }

    // A re-run of a completed job gives the same bytes, stored once.
    const again = final.jobs.find((j) => j.id !== killedJob)!;
    await app.api.request('POST', `/v1/jobs/${again.id}/requeue`);
    const rerun = await waitJobs(tb!, (s) => {
      const j = s.jobs.find((x) => x.id === again.id)!;
      return j.status === 'completed' || j.status === 'failed' ? j : null;
    }, 180_000);
    expect(rerun.status).toBe('completed');
    expect(rerun.artifact).toBe(again.artifact);
    const after = (await app.api.request<{ artifacts: ArtifactSnapshot[] }>('GET', '/v1/artifacts')).artifacts;
    expect(after.length, 'identical outputs are stored once').toBe(artifacts.length);
    expect(after.find((a) => a.sha256 === again.artifact)!.producedBy.map((p) => p.jobId)).toContain(again.id);
  }, 900_000);
});

/** Polls the app's jobs state until `check` returns something (or throws). */
async function waitJobs<T>(tb: Testbed, check: (s: JobsState) => T | null, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: JobsState | null = null;
  while (Date.now() < deadline) {
    last = await tb.app.api.request<JobsState>('GET', '/v1/jobs');
    const v = check(last);
    if (v) return v;
    await new Promise((r) => setTimeout(r, 300));
  }
  const text = last?.jobs.map((j) => `${j.name}: ${j.status} ${j.node ?? ''} ${j.reason ?? ''}`).join('\n') ?? 'no state';
  throw new Error(`jobs did not get there in ${timeoutMs} ms:\n${text}\n${tb.app.proc.tail(20)}`);
}
