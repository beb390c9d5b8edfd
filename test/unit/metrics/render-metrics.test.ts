// The /metrics page as text: escaping of names that come from other machines and from people, HELP/TYPE
// lines, counters vs gauges, and what is left out. Parsed values are checked in metrics-scrape.test.ts.
import { describe, expect, it } from 'vitest';
import { escapeHelp, escapeLabelValue, formatValue, renderFamily } from '../../../src-main/core/metrics/exposition';
import { renderMetrics } from '../../../src-main/core/metrics/render-metrics';
import { gpu, hardware, HOSTILE_GPU, HOSTILE_NODE, HOSTILE_RUN, input, NOW, run, worker } from './fixtures';

const SAMPLE_LINE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*\})? (?:[-+]?[0-9.e+-]+|NaN|[+-]Inf)$/;

describe('exposition escaping', () => {
  it('escapes backslash, double quote and line feed in label values, in that order', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
    expect(escapeLabelValue('\\n')).toBe('\\\\n'); // a literal backslash-n stays two characters, not a newline
    expect(escapeLabelValue('jëtson-ünï 🚀')).toBe('jëtson-ünï 🚀');
  });

  it('escapes backslash and line feed in HELP, leaving quotes alone', () => {
    expect(escapeHelp('say "hi"\\\nnext')).toBe('say "hi"\\\\\\nnext');
  });

  it('writes special floats the way Go parses them', () => {
    expect([NaN, Infinity, -Infinity, 0, 1.5, 1e21].map(formatValue)).toEqual(['NaN', '+Inf', '-Inf', '0', '1.5', '1e+21']);
  });

  it('refuses a counter without _total, bad metric or label names, and writes a repeated label set once', () => {
    expect(() => renderFamily({ name: 'x_count', type: 'counter', help: 'h', samples: [] })).toThrow(/must end in _total/);
    expect(() => renderFamily({ name: '1bad', type: 'gauge', help: 'h', samples: [] })).toThrow(/not a valid metric name/);
    expect(() => renderFamily({ name: 'ok', type: 'gauge', help: 'h', samples: [{ labels: { 'a-b': 1 }, value: 1 }] })).toThrow(/label name/);
    expect(() => renderFamily({ name: 'ok', type: 'gauge', help: 'h', samples: [{ labels: { __name__: 'x' }, value: 1 }] })).toThrow(/label name/);
    const text = renderFamily({ name: 'ok', type: 'gauge', help: 'h', samples: [{ labels: { a: 'x' }, value: 1 }, { labels: { a: 'x' }, value: 2 }] });
    expect(text).toBe('# HELP ok h\n# TYPE ok gauge\nok{a="x"} 1\n');
  });
});

describe('renderMetrics', () => {
  const hostile = input({
    workers: [worker(0, { node: HOSTILE_NODE, gpus: [{ uuid: 'GPU-remote-1', name: HOSTILE_GPU, vramTotalMb: 8192 }] })],
    runs: [run('run-1', { spec: { ...run('x').spec, name: HOSTILE_RUN } })],
    hardware: hardware({ hostname: 'host"with\\odd\nname', gpus: [gpu(0, { name: HOSTILE_GPU })] }),
  });
  const text = renderMetrics(hostile);
  const lines = text.trimEnd().split('\n');

  it('every line is a HELP, a TYPE or a well-formed sample: hostile names cannot forge a line', () => {
    expect(text.endsWith('\n')).toBe(true);
    for (const line of lines) {
      if (line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
      expect(line).toMatch(SAMPLE_LINE);
    }
    expect(lines.filter((l) => l.startsWith('gpu_share_workers{')).map((l) => l.split(' ').pop())).toEqual(['0', '1', '0', '0', '0']);
    expect(lines.some((l) => l.startsWith('# TYPE forged'))).toBe(false);
    expect(text).toContain('node="evil\\"node\\\\x\\ngpu_share_workers{state=\\"failed\\"} 999"');
    expect(text).toContain('name="run \\"quoted\\" \\\\ back\\nslash } {"');
  });

  it('has exactly one HELP and one TYPE per family, right before its samples, all named gpu_share_*', () => {
    const helps = lines.filter((l) => l.startsWith('# HELP ')).map((l) => l.split(' ')[2]);
    const types = lines.filter((l) => l.startsWith('# TYPE ')).map((l) => l.split(' ')[2]);
    expect(helps).toEqual(types);
    expect(new Set(helps).size).toBe(helps.length);
    for (const name of helps) expect(name).toMatch(/^gpu_share_[a-z_]+$/);
    lines.forEach((line, i) => {
      if (!line.startsWith('# TYPE ')) return;
      expect(lines[i - 1]).toBe(`# HELP ${line.split(' ')[2]} ${lines[i - 1]!.split(' ').slice(3).join(' ')}`);
    });
  });

  it('counters are the cumulative per-run totals and end in _total; everything else is a gauge', () => {
    const types = Object.fromEntries(lines.filter((l) => l.startsWith('# TYPE ')).map((l) => [l.split(' ')[2], l.split(' ')[3]]));
    const counters = Object.keys(types).filter((n) => types[n] === 'counter');
    expect(counters.sort()).toEqual(['gpu_share_run_restarts_total', 'gpu_share_run_worker_failures_total']);
    for (const [name, type] of Object.entries(types)) {
      if (type === 'gauge') expect(name.endsWith('_total')).toBe(false);
    }
    expect(types.gpu_share_build_info).toBe('gauge');
  });

  it('leaves out what is not reported instead of writing 0: steps of idle workers, used memory of remote GPUs', () => {
    expect(text).not.toMatch(/^gpu_share_worker_step/m);
    expect(text).not.toMatch(/^gpu_share_run_step/m); // the run has no progress yet
    const used = lines.filter((l) => l.startsWith('gpu_share_gpu_memory_used_bytes{'));
    expect(used).toHaveLength(1);
    expect(used[0]).toContain('source="this-machine"');
    expect(lines.filter((l) => l.startsWith('gpu_share_gpu_memory_total_bytes{'))).toHaveLength(2);
  });

  it('lists a GPU once: the local worker and worker GPUs this machine reported are skipped', () => {
    const local = gpu(0);
    const out = renderMetrics(
      input({
        hardware: hardware({ gpus: [local] }),
        workers: [
          worker(0, { node: 'desktop', local: true, gpus: [{ uuid: local.uuid, name: local.name, vramTotalMb: local.vramTotalMb }] }),
          worker(1, { node: 'desktop-cli', gpus: [{ uuid: local.uuid, name: local.name, vramTotalMb: local.vramTotalMb }] }),
          worker(2, { node: 'jetson', gpus: [{ uuid: null, name: 'Orin (nvgpu)', vramTotalMb: 7620 }] }),
          worker(3, { node: 'gone', state: 'failed', gpus: [{ uuid: 'GPU-dead', name: 'x', vramTotalMb: 1 }] }),
        ],
      }),
    );
    const totals = out.split('\n').filter((l) => l.startsWith('gpu_share_gpu_memory_total_bytes{'));
    expect(totals).toEqual([
      `gpu_share_gpu_memory_total_bytes{node="desktop",gpu="0",uuid="${local.uuid}",name="NVIDIA GeForce RTX 4090",source="this-machine"} ${24564 * 1048576}`,
      `gpu_share_gpu_memory_total_bytes{node="jetson",gpu="0",uuid="",name="Orin (nvgpu)",source="worker"} ${7620 * 1048576}`,
    ]);
  });

  it('without a hardware snapshot yet, the GPU and machine families are present but empty', () => {
    const out = renderMetrics(input({ hardware: null }));
    expect(out).toContain('# TYPE gpu_share_gpu_utilization_ratio gauge\n# HELP gpu_share_gpu_temperature_celsius');
    expect(out).not.toMatch(/^gpu_share_nvidia_smi_up/m);
  });

  it('heartbeat age is never negative (a heartbeat stamped after the scrape began) and left workers have none', () => {
    const out = renderMetrics(input({ workers: [worker(0, { lastHeartbeatAt: NOW + 40 }), worker(1, { state: 'left' })] }));
    expect(out).toContain('gpu_share_worker_heartbeat_age_seconds{worker_id="0",node="n0"} 0\n');
    expect(out).not.toContain('gpu_share_worker_heartbeat_age_seconds{worker_id="1"');
  });
});
