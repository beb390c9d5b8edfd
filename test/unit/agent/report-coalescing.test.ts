// A trainer printing 700 lines a second costs the agent a request per flush, not per line: the supervisor's
// output and progress reports go through the sender in few, merged batches, and every step reaches the coordinator.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReportBatch } from '../../../src-main/agent/report-queue';
import { BULK_FLUSH_MS, ReportSender } from '../../../src-main/agent/report-sender';
import { TrainingSupervisor } from '../../../src-main/agent/training-supervisor';
import { FakeClock } from '../coordinator/fake-clock';
import { shellPlan } from './agent-fixtures';
import { FakePtySpawner, settle } from './fake-pty';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('report coalescing', () => {
  it('2,000 progress lines over ~3 s go in about one request a second, every step once, the output whole', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gpu-share-coalesce-'));
    dirs.push(dataDir);
    const clock = new FakeClock();
    const pty = new FakePtySpawner();
    const sent: ReportBatch[] = [];
    const sender = new ReportSender({
      clock,
      log: () => undefined,
      send: async (batch) => {
        sent.push(structuredClone(batch));
        return { kind: 'ok', status: 200, body: { ok: true } };
      },
      ready: () => true,
      epoch: () => 1,
      onRefused: () => undefined,
    });
    const supervisor = new TrainingSupervisor({
      pty,
      clock,
      log: () => undefined,
      dataDir,
      workDir: dataDir,
      env: { PATH: '/usr/bin:/bin' },
      python: () => null,
      gpus: () => [],
      node: () => 'alpha',
      stopGraceMs: 3000,
      report: (report) => sender.push(report),
      onExit: () => undefined,
    });
    sender.start();
    supervisor.launch(shellPlan('true'), 1);
    const lines = 2000;
    let expected = '';
    for (let step = 0; step < lines; step++) {
      // A pty hands over a line at a time (often less): the worst case for per-line costs.
      const text = `[default0]:GPU_SHARE_PROGRESS {"step":${step},"loss":${1 / (step + 1)},"samples_per_sec":700,"rank":0}\r\n`;
      expected += text;
      pty.last.write(text);
      if (step % 10 === 9) {
        clock.advance(14); // 700 lines/s
        await settle();
      }
    }
    clock.advance(BULK_FLUSH_MS);
    await settle();
    const seconds = Math.ceil((lines / 700) * 1000) / 1000;
    // One request a second while only output and progress wait (plus the first one with `started`), not one
    // per line nor one per REPORT_FLUSH_MS look (5 a second: most of the app's CPU per line).
    expect(sent.length).toBeLessThanOrEqual(Math.ceil((seconds * 1000) / BULK_FLUSH_MS) + 2);
    const reports = sent.flatMap((b) => b.reports);
    expect(reports.length).toBeLessThanOrEqual(3 * sent.length);
    const steps = reports.flatMap((r) => (r.type === 'progress' ? r.points.map((p) => p.step) : []));
    expect(steps).toEqual(Array.from({ length: lines }, (_, i) => i));
    const output = reports.map((r) => (r.type === 'output' ? r.data : '')).join('');
    expect(output).toBe(expected);
    sender.stop();
  });
});
