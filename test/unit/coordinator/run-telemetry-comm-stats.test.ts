/** RunTelemetry.commStats(): what the trainer reported about one step, for the coordinator's comm choice. */
import { describe, expect, it } from 'vitest';
import { RunTelemetry } from '../../../src-main/core/coordinator/runs/run-telemetry';

const T0 = Date.UTC(2026, 0, 1, 12);

function line(step: number, rank: number, stats?: { grad: number; compute: number }): string {
  const record: Record<string, unknown> = { step, loss: 1 / (step + 1), samples_per_sec: 100, rank, world_size: 2 };
  if (stats) Object.assign(record, { grad_bytes: stats.grad, compute_s: stats.compute, comm: 'ddp' });
  return `[default0]:GPU_SHARE_PROGRESS ${JSON.stringify(record)}\r\n`;
}

describe('RunTelemetry.commStats', () => {
  it('is null until a trainer reports grad_bytes and compute_s, then gives them', () => {
    const t = new RunTelemetry({ now: () => T0 });
    t.onGeneration(1, [1, 2], T0, 'run started');
    t.onOutput(1, 'alpha', 1, line(0, 0));
    expect(t.commStats()).toBeNull();
    t.onOutput(1, 'alpha', 1, line(1, 0, { grad: 4_000_000, compute: 0.02 }));
    expect(t.commStats()).toEqual({ gradBytes: 4_000_000, stepComputeS: 0.02 });
  });

  it('keeps the trainer\'s powersgd_bytes with them when it says it', () => {
    const t = new RunTelemetry({ now: () => T0 });
    t.onGeneration(1, [1, 2], T0, 'run started');
    const record = { step: 0, loss: 1, rank: 0, world_size: 2, grad_bytes: 75_268, powersgd_bytes: 3140, compute_s: 0.01, comm: 'ddp' };
    t.onOutput(1, 'alpha', 1, `GPU_SHARE_PROGRESS ${JSON.stringify(record)}\n`);
    expect(t.commStats()).toEqual({ gradBytes: 75_268, powersgdBytes: 3140, stepComputeS: 0.01 });
  });

  it("prefers rank 0's figures within a generation, whoever reports later", () => {
    const t = new RunTelemetry({ now: () => T0 });
    t.onGeneration(1, [1, 2], T0, 'run started');
    t.onOutput(2, 'beta', 1, line(0, 1, { grad: 100, compute: 0.5 }));
    expect(t.commStats()).toEqual({ gradBytes: 100, stepComputeS: 0.5 });
    t.onOutput(1, 'alpha', 1, line(0, 0, { grad: 200, compute: 0.25 }));
    t.onOutput(2, 'beta', 1, line(1, 1, { grad: 300, compute: 0.75 }));
    expect(t.commStats()).toEqual({ gradBytes: 200, stepComputeS: 0.25 });
  });

  it("keeps the last generation's figures until the new one reports, then takes the new one's (even from rank 1); a stale generation's lines do not overwrite", () => {
    const t = new RunTelemetry({ now: () => T0 });
    t.onGeneration(1, [1, 2], T0, 'run started');
    t.onOutput(1, 'alpha', 1, line(0, 0, { grad: 200, compute: 0.25 }));
    t.onGeneration(2, [2], T0 + 1000, 'worker 1 failed');
    expect(t.commStats()).toEqual({ gradBytes: 200, stepComputeS: 0.25 });
    t.onOutput(2, 'beta', 2, line(1, 1, { grad: 200, compute: 0.4 }));
    expect(t.commStats()).toEqual({ gradBytes: 200, stepComputeS: 0.4 });
    t.onOutput(1, 'alpha', 1, line(1, 0, { grad: 999, compute: 9 }));
    expect(t.commStats()).toEqual({ gradBytes: 200, stepComputeS: 0.4 });
  });
});
