// What `gpu-share jobs …` prints: the queue table and the exact JSON rows `jobs list --json` promises, one job in
// full with every node's placement reason, a manifest's errors at FILE:LINE:COL, artifacts and their file names.
import { describe, expect, it } from 'vitest';
import { defaultArtifactFileName } from '../../../src-main/cli/commands/jobs/artifact-download';
import { formatArtifactsTable, formatJobDetail, formatJobsTable, formatManifestResult, humanBytes, jobListRows } from '../../../src-main/cli/commands/jobs/job-format';
import { artifactSnapshot, jobSnapshot, NOW, sha } from './jobs-fixtures';

const running = jobSnapshot('lora-r8-lr1e-3', {
  status: 'running',
  attempts: 2,
  node: 'desk',
  workerId: 3,
  gpuIndex: 0,
  heldVramMb: 2048,
  measuredPeakMb: 2662,
  overBudget: true,
  progress: { step: 12, totalSteps: 40, loss: 1.25 },
  reason: 'desk: GPU 0, 18.2 GiB left',
  startedAt: NOW - 30_000,
});
const waiting = jobSnapshot('lora-r32', { reason: 'waiting: no node fits (jetson: needs 16 GiB VRAM, 4.8 GiB usable left)' });
const onCpu = jobSnapshot('tiny', { status: 'completed', attempts: 1, node: 'cpu-box', workerId: 4, artifact: sha('tar'), finishedAt: NOW - 1000, startedAt: NOW - 11_000 });

describe('jobs list', () => {
  it('prints one aligned row per job: short id, node with its GPU, attempts of max, step/total, reason', () => {
    expect(formatJobsTable([running, waiting, onCpu])).toBe(
      [
        'ID            NAME            STATUS     NODE           ATTEMPTS  PROGRESS  REASON',
        `${running.id.slice(0, 12)}  lora-r8-lr1e-3  running    desk (GPU 0)   2/3       13/40     desk: GPU 0, 18.2 GiB left`,
        `${waiting.id.slice(0, 12)}  lora-r32        pending    -              0/3       -         waiting: no node fits (jetson: needs 16 GiB VRAM, 4.8 GiB usable left)`,
        `${onCpu.id.slice(0, 12)}  tiny            completed  cpu-box (CPU)  1/3       -         -`,
        '',
      ].join('\n'),
    );
  });

  it('says how to submit a manifest when the queue is empty', () => {
    expect(formatJobsTable([])).toBe('No jobs. Submit a manifest: gpu-share jobs submit FILE (the format is in docs/jobs.md)\n');
    // Issue 25 item 8: `jobs list --status running` with nothing running is not an empty queue.
    expect(formatJobsTable([], 'running')).toBe('No running jobs. gpu-share jobs list (without --status) shows every job in the queue.\n');
  });

  it('--json rows carry exactly id, name, status, node, attempts, reason, artifact, with the full id', () => {
    const rows = jobListRows([running, onCpu]);
    expect(rows).toEqual([
      { id: running.id, name: 'lora-r8-lr1e-3', status: 'running', node: 'desk', attempts: 2, reason: 'desk: GPU 0, 18.2 GiB left', artifact: null },
      { id: onCpu.id, name: 'tiny', status: 'completed', node: 'cpu-box', attempts: 1, reason: null, artifact: sha('tar') },
    ]);
    for (const row of rows) expect(Object.keys(row)).toEqual(['id', 'name', 'status', 'node', 'attempts', 'reason', 'artifact']);
  });
});

describe('jobs show', () => {
  it('tells status and why, memory held and measured (over budget flagged), spec, each node verdict and the output tail', () => {
    const text = formatJobDetail(
      running,
      [
        { node: 'desk', ok: true, reason: 'desk: GPU 0, 18.2 GiB left' },
        { node: 'jetson', ok: false, reason: 'jetson: needs 16 GiB VRAM, 4.8 GiB usable left' },
      ],
      'step 11 loss 1.3\r\nstep 12 loss 1.25\r\n',
      NOW,
    );
    const lines = text.split('\n');
    expect(lines[0]).toBe(`Job ${running.id}: lora-r8-lr1e-3`);
    expect(lines).toContain('  status      running — desk: GPU 0, 18.2 GiB left');
    expect(lines).toContain('  attempts    2 of 3');
    expect(lines).toContain('  node        desk (GPU 0)');
    expect(lines).toContain('  vram        holds 2 GiB, measured peak 2.6 GiB — OVER what it declared');
    expect(lines).toContain('  progress    step 13/40, loss 1.25');
    expect(lines).toContain('  command     lora_train.py --rank 8');
    expect(lines).toContain('  model       tiny-gpt (mode lora), seed 1');
    expect(lines).toContain('  hyper       rank=8, lr=0.0003, steps=200');
    expect(lines).toContain('  constraints prefers CUDA, 2 GiB VRAM, 1 GiB RAM, 1 cores');
    expect(text).toContain('Placement (where it could go, node by node)\n  fits    desk: GPU 0, 18.2 GiB left\n  no      jetson: needs 16 GiB VRAM, 4.8 GiB usable left\n');
    expect(text.endsWith('Last output\n  step 11 loss 1.3\n  step 12 loss 1.25\n')).toBe(true);
  });

  it('marks a job a reloaded manifest dropped, and one without output', () => {
    const old = jobSnapshot('old', { inManifest: false });
    const text = formatJobDetail({ ...old, spec: { ...old.spec, model: '', mode: '' } }, [], '', NOW);
    expect(text).toContain('\n  model       -, seed 1\n');
    expect(text.split('\n')[0]).toMatch(/: old \(no longer in the manifest\)$/);
    expect(text.endsWith('\nNo output yet\n')).toBe(true);
    expect(text).not.toContain('Placement');
  });
});

describe('manifest results', () => {
  it('prints every error as FILE:LINE:COL: message, the file as the person typed it', () => {
    const result = {
      ok: false as const,
      fileName: '/home/me/sweep.toml',
      errors: [
        { message: 'unknown key "min_vram_gb" (did you mean min_vram_gib?)', line: 7, col: 1, path: ['jobs', 0, 'min_vram_gb'] },
        { message: 'min_cores must be a whole number, got a string', line: 12, col: 13, path: ['jobs', 1, 'min_cores'] },
        { message: 'the manifest lists no [[jobs]]', line: null, col: null, path: [] },
      ],
    };
    expect(formatManifestResult(result, 'sweep.toml')).toBe(
      'sweep.toml:7:1: unknown key "min_vram_gb" (did you mean min_vram_gib?)\nsweep.toml:12:13: min_cores must be a whole number, got a string\nsweep.toml: the manifest lists no [[jobs]]\n',
    );
  });

  it('counts what a submit added, kept and no longer lists, and says how to remove the last', () => {
    expect(formatManifestResult({ ok: true, fileName: '/m.toml', added: ['a', 'b'], kept: ['c'], missing: [] }, 'm.toml')).toBe(
      'm.toml: 2 added (pending), 1 kept as they were, 0 no longer in the manifest\n',
    );
    expect(formatManifestResult({ ok: true, fileName: '/m.toml', added: [], kept: [], missing: ['x'] }, 'm.toml')).toContain('stay until cancelled: gpu-share jobs cancel JOB\n');
  });
});

describe('artifacts', () => {
  it('lists newest first with size and every job attempt that produced the bytes', () => {
    const older = artifactSnapshot('one', { createdAt: NOW - 120_000, producedBy: [{ jobId: running.id, jobName: 'lora-r8', attempt: 1 }] });
    const newer = artifactSnapshot('x'.repeat(3000), { producedBy: [{ jobId: running.id, jobName: 'a', attempt: 1 }, { jobId: waiting.id, jobName: 'b', attempt: 2 }] });
    expect(formatArtifactsTable([older, newer], NOW)).toBe(
      [
        'SHA256        SIZE     STORED     PRODUCED BY',
        `${newer.sha256.slice(0, 12)}  2.9 KiB  5 s ago    a #1, b #2`,
        `${older.sha256.slice(0, 12)}  3 B      2 min ago  lora-r8 #1`,
        '',
      ].join('\n'),
    );
    expect(formatArtifactsTable([], NOW)).toBe('No artifacts yet: a job stores one when it completes.\n');
  });

  it('sizes in binary units', () => {
    expect([humanBytes(0), humanBytes(1023), humanBytes(1536), humanBytes(5 * 1024 * 1024), humanBytes(3 * 1024 ** 3)]).toEqual(['0 B', '1023 B', '1.5 KiB', '5 MiB', '3 GiB']);
  });

  it('names the downloaded file after the job and the hash, never letting the name become a path', () => {
    const hash = sha('bytes');
    expect(defaultArtifactFileName('lora-r8-lr1e-3', hash)).toBe(`lora-r8-lr1e-3-${hash.slice(0, 12)}.tar.gz`);
    expect(defaultArtifactFileName('../../etc/passwd', hash)).toBe(`_.._etc_passwd-${hash.slice(0, 12)}.tar.gz`);
    expect(defaultArtifactFileName('..', hash)).toBe(`artifact-${hash.slice(0, 12)}.tar.gz`);
    expect(defaultArtifactFileName(null, hash)).toBe(`artifact-${hash.slice(0, 12)}.tar.gz`);
  });
});
