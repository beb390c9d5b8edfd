import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_CARRY_CHARS, MAX_COMM_S, parseProgressLine, parseProgressLines } from '../../../src-main/platform/runs/progress-line';

const LINE = 'GPU_SHARE_PROGRESS {"step":12,"total_steps":300,"loss":0.53,"samples_per_sec":812.3,"rank":0,"world_size":2,"shard":[0,500],"resumed_from":10}';

describe('parseProgressLine', () => {
  it('reads every documented field', () => {
    expect(parseProgressLine(LINE)).toEqual({
      step: 12,
      totalSteps: 300,
      loss: 0.53,
      samplesPerSec: 812.3,
      rank: 0,
      worldSize: 2,
      shard: [0, 500],
      resumedFrom: 10,
      gradBytes: null,
      powersgdBytes: null,
      stepComputeS: null,
      comm: null,
      commS: null,
      drift: null,
      driftSteps: null,
      metrics: null,
    });
  });

  it('reads what a (re)start\'s first lines say about one step: grad_bytes, compute_s, comm', () => {
    const first = parseProgressLine('GPU_SHARE_PROGRESS {"step":0,"loss":2.3,"grad_bytes":4212744,"powersgd_bytes":36500,"compute_s":0.0125,"comm":"powersgd"}');
    expect(first).toMatchObject({ step: 0, gradBytes: 4212744, powersgdBytes: 36500, stepComputeS: 0.0125, comm: 'powersgd' });
    expect(parseProgressLine('GPU_SHARE_PROGRESS {"step":0,"powersgd_bytes":-5}')?.powersgdBytes).toBeNull();
    for (const comm of ['ddp', 'fp16', 'local-sgd'] as const) expect(parseProgressLine(`GPU_SHARE_PROGRESS {"step":1,"comm":"${comm}"}`)?.comm).toBe(comm);
    expect(parseProgressLine('GPU_SHARE_PROGRESS {"step":1,"grad_bytes":0,"compute_s":0}')).toMatchObject({ gradBytes: 0, stepComputeS: 0 });
  });

  it('reads comm_s (what one communication round measurably cost), bounded by MAX_COMM_S', () => {
    expect(parseProgressLine('GPU_SHARE_PROGRESS {"step":50,"comm":"local-sgd","comm_s":0.2134}')).toMatchObject({ comm: 'local-sgd', commS: 0.2134 });
    expect(parseProgressLine(`GPU_SHARE_PROGRESS {"step":5,"comm_s":${MAX_COMM_S}}`)?.commS).toBe(MAX_COMM_S);
    for (const bad of ['-0.1', `${MAX_COMM_S + 1}`, '"0.2"', 'null', '1e400']) expect(parseProgressLine(`GPU_SHARE_PROGRESS {"step":5,"comm_s":${bad}}`)?.commS, bad).toBeNull();
  });

  it('drops wrong grad_bytes / compute_s / comm (negative, fractional, unsafe, non-finite, unknown, auto) to null', () => {
    const bad = [
      '{"step":1,"grad_bytes":-1,"compute_s":-0.5,"comm":"auto"}',
      '{"step":1,"grad_bytes":1.5,"compute_s":"0.1","comm":"DDP"}',
      '{"step":1,"grad_bytes":9007199254740993,"compute_s":1e400,"comm":3}',
      '{"step":1,"grad_bytes":"100","compute_s":null,"comm":["ddp"]}',
    ];
    for (const json of bad) {
      expect(parseProgressLine(`GPU_SHARE_PROGRESS ${json}`), json).toMatchObject({ step: 1, gradBytes: null, stepComputeS: null, comm: null });
    }
  });

  it("strips torchrun's [default0]: prefix, nested prefixes, spaces, and pty \\r", () => {
    expect(parseProgressLine(`[default0]:${LINE}\r`)?.step).toBe(12);
    expect(parseProgressLine(`[default1]: ${LINE}`)?.step).toBe(12);
    expect(parseProgressLine(`[rank3]:[default0]:${LINE}\r\r`)?.step).toBe(12);
  });

  it('keeps what a carriage return left on screen (a progress bar overwritten by the line)', () => {
    expect(parseProgressLine(`epoch 1: 40%|####\r${LINE}`)?.step).toBe(12);
    expect(parseProgressLine(`epoch 1: 40%|####\repoch 1: 41%|####\r${LINE}\r\r`)?.step).toBe(12);
    expect(parseProgressLine(`${LINE}\roverwritten`)).toBeNull();
  });

  it('reads a local-sgd average\'s drift and the steps it grew over; a negative drift or fractional steps become null', () => {
    expect(parseProgressLine('GPU_SHARE_PROGRESS {"step":17,"comm":"local-sgd","comm_s":0.2,"drift":0.0312,"drift_steps":18}')).toMatchObject({ drift: 0.0312, driftSteps: 18 });
    expect(parseProgressLine('GPU_SHARE_PROGRESS {"step":17,"drift":-0.1,"drift_steps":1.5}')).toMatchObject({ drift: null, driftSteps: null });
  });

  it('needs only step; missing or wrong-typed optional fields become null', () => {
    expect(parseProgressLine('GPU_SHARE_PROGRESS {"step":0}')).toEqual({
      step: 0,
      totalSteps: null,
      loss: null,
      samplesPerSec: null,
      rank: null,
      worldSize: null,
      shard: null,
      resumedFrom: null,
      gradBytes: null,
      powersgdBytes: null,
      stepComputeS: null,
      comm: null,
      commS: null,
      drift: null,
      driftSteps: null,
      metrics: null,
    });
    const odd = parseProgressLine('GPU_SHARE_PROGRESS {"step":3,"loss":"NaN","samples_per_sec":-5,"rank":1.5,"world_size":0,"shard":[9,2],"resumed_from":-1,"total_steps":2.5}');
    expect(odd).toEqual({ step: 3, totalSteps: null, loss: null, samplesPerSec: null, rank: null, worldSize: null, shard: null, resumedFrom: null, gradBytes: null, powersgdBytes: null, stepComputeS: null, comm: null, commS: null, drift: null, driftSteps: null, metrics: null });
  });

  it('ignores malformed lines instead of throwing', () => {
    const bad = [
      'GPU_SHARE_PROGRESS',
      'GPU_SHARE_PROGRESS ',
      'GPU_SHARE_PROGRESS {"step":1',
      'GPU_SHARE_PROGRESS{"step":1}',
      'GPU_SHARE_PROGRESS [1,2]',
      'GPU_SHARE_PROGRESS null',
      'GPU_SHARE_PROGRESS "step"',
      'GPU_SHARE_PROGRESS {"loss":0.1}',
      'GPU_SHARE_PROGRESS {"step":-1}',
      'GPU_SHARE_PROGRESS {"step":1.5}',
      'GPU_SHARE_PROGRESS {"step":"3"}',
      'GPU_SHARE_PROGRESS {"step":1e400}',
      'GPU_SHARE_PROGRESS {"step":1} trailing',
      'echo GPU_SHARE_PROGRESS {"step":1}',
      'plain text',
      '',
    ];
    for (const line of bad) expect(parseProgressLine(line), line).toBeNull();
  });
});

describe('parseProgressLines', () => {
  it('joins a line split across chunks, and carries the unfinished tail', () => {
    const whole = `[default0]:${LINE}\r\n`;
    const a = parseProgressLines(whole.slice(0, 30));
    expect(a.progress).toEqual([]);
    const b = parseProgressLines(whole.slice(30, 80), a.carry);
    expect(b.progress).toEqual([]);
    const c = parseProgressLines(whole.slice(80), b.carry);
    expect(c.progress.map((p) => p.step)).toEqual([12]);
    expect(c.carry).toBe('');
  });

  it('finds the progress lines among ordinary output and two ranks, in order', () => {
    const out = [
      'WARNING:torch.distributed.run:Setting OMP_NUM_THREADS',
      '[default1]:GPU_SHARE_PROGRESS {"step":0,"rank":1}',
      '[default0]:GPU_SHARE_PROGRESS {"step":0,"rank":0}',
      '[default0]:some log line',
      '[default0]:GPU_SHARE_PROGRESS {"step":1,"rank":0}',
      'Traceback (most recent call last):',
      '',
    ].join('\r\n');
    const r = parseProgressLines(out);
    expect(r.progress.map((p) => [p.rank, p.step])).toEqual([
      [1, 0],
      [0, 0],
      [0, 1],
    ]);
  });

  it('keeps a malformed line from hiding the good ones around it', () => {
    const r = parseProgressLines('GPU_SHARE_PROGRESS {"step":1}\nGPU_SHARE_PROGRESS {oops\nGPU_SHARE_PROGRESS {"step":2}\n');
    expect(r.progress.map((p) => p.step)).toEqual([1, 2]);
  });

  it('drops an endless line instead of growing without bound', () => {
    const big = 'x'.repeat(MAX_CARRY_CHARS + 10);
    const r = parseProgressLines(big);
    expect(r.carry).toBe('');
    const next = parseProgressLines('GPU_SHARE_PROGRESS {"step":4}\n', r.carry);
    expect(next.progress.map((p) => p.step)).toEqual([4]);
  });

  it('property: however the stream is cut into chunks, the same records come out', () => {
    const lines = Array.from({ length: 6 }, (_, i) => `[default${i % 2}]:GPU_SHARE_PROGRESS {"step":${i},"loss":${i / 10}}\r\nnoise ${i}\r\n`);
    const stream = lines.join('');
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: stream.length }), { maxLength: 12 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        let carry = '';
        const steps: number[] = [];
        let prev = 0;
        for (const p of [...points, stream.length]) {
          const r = parseProgressLines(stream.slice(prev, p), carry);
          carry = r.carry;
          steps.push(...r.progress.map((x) => x.step));
          prev = p;
        }
        expect(steps).toEqual([0, 1, 2, 3, 4, 5]);
      }),
    );
  });

  it('property: arbitrary input never throws', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (chunk, carry) => {
        const r = parseProgressLines(`GPU_SHARE_PROGRESS ${chunk}\n${chunk}`, carry);
        expect(Array.isArray(r.progress)).toBe(true);
      }),
    );
  });
});
