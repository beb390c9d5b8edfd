// How the page words numbers, times, file errors and commands; and the Start run form's checks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatAgo, formatDuration, formatIssueLine, formatLoss, formatMb, formatRate, joinCommand, splitCommand } from '../../../src-renderer/ui/format';
import { fieldsFromSpec, specFromFields } from '../../../src-renderer/features/runs/start/run-form';

describe('formatting', () => {
  it('prints MB as cluster.yaml counts them, so "20879 MB usable" matches the CLI', () => {
    expect(formatMb(20879)).toBe('20879 MB');
    expect(formatMb(4915.2)).toBe('4915 MB');
    expect(formatMb(null)).toBe('—');
    expect(formatMb(NaN)).toBe('—');
  });

  it('ticks heartbeats in tenths of a second, then minutes and hours', () => {
    expect(formatAgo(1234)).toBe('1.2 s ago');
    expect(formatAgo(59_949)).toBe('59.9 s ago');
    expect(formatAgo(20)).toBe('just now');
    expect(formatAgo(-5)).toBe('just now');
    expect(formatAgo(125_000)).toBe('2 min ago');
    expect(formatAgo(2 * 3600_000 + 5)).toBe('2 h ago');
    expect(formatAgo(3 * 86400_000)).toBe('3 d ago');
  });

  it('formats durations, losses and throughput', () => {
    expect(formatDuration(72_000)).toBe('1 min 12 s');
    expect(formatDuration(3_660_000)).toBe('1 h 1 min');
    expect(formatLoss(0.123456)).toBe('0.1235');
    expect(formatLoss(0.00001234)).toBe('1.23e-5');
    expect(formatLoss(null)).toBe('—');
    expect(formatRate(812.34)).toBe('812 samples/s');
    expect(formatRate(12.34)).toBe('12.3 samples/s');
  });

  it('writes file errors as file:line:col: message, the form editors jump to', () => {
    expect(formatIssueLine('bad.yaml', { severity: 'error', message: 'nodes[0].gpus[0].vram_mb must be a whole number of MB, got "lots"', path: [], line: 7, col: 18 })).toBe(
      'bad.yaml:7:18: nodes[0].gpus[0].vram_mb must be a whole number of MB, got "lots"',
    );
    expect(formatIssueLine('c.yaml', { severity: 'error', message: 'cluster must have at least one node', path: [] })).toBe('c.yaml: cluster must have at least one node');
  });
});

describe('command lines in the Start run form', () => {
  it('splits on whitespace with quotes and escapes, without any shell expansion', () => {
    expect(splitCommand('  /opt/t.py --steps 300  ')).toEqual({ ok: true, argv: ['/opt/t.py', '--steps', '300'] });
    expect(splitCommand(`t.py --name "my run" --glob '*.pt' a\\ b ''`)).toEqual({ ok: true, argv: ['t.py', '--name', 'my run', '--glob', '*.pt', 'a b', ''] });
    expect(splitCommand('t.py "open')).toEqual({ ok: false, error: 'the command has an unclosed " quote' });
    expect(splitCommand('   ')).toMatchObject({ ok: false });
  });

  it('joinCommand then splitCommand gives back the same argv, for any arguments', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 8 }), (argv) => {
        const back = splitCommand(joinCommand(argv));
        expect(back).toEqual({ ok: true, argv });
      }),
      { numRuns: 300 },
    );
  });

  it('turns the form into a run spec, keeping launcher and env from the example', () => {
    const example = {
      name: 'DDP example',
      command: ['/app/assets/trainers/ddp_example.py', '--steps', '300'],
      samples: 10_000,
      minWorkers: 1,
      maxWorkers: 8,
      heartbeatTimeoutMs: 5000,
      maxRestarts: 3,
      nprocPerNode: 1 as const,
      useGpus: false,
      launcher: 'torchrun' as const,
      env: { FOO: 'bar' },
    };
    const fields = fieldsFromSpec(example);
    expect(fields).toMatchObject({ command: '/app/assets/trainers/ddp_example.py --steps 300', samples: '10000' });
    expect(fields).not.toHaveProperty('timeoutSec'); // the cluster's, not the form's
    const result = specFromFields({ ...fields, minWorkers: '2' }, example);
    // The form's Communication field says what it sends: auto unless the person picks a strategy.
    expect(result).toEqual({ ok: true, spec: { ...example, minWorkers: 2, comm: 'auto' } });
  });

  it('names every bad field with what is expected', () => {
    const fields = fieldsFromSpec({ command: ['t.py'], samples: 10 });
    const result = specFromFields({ ...fields, name: ' ', samples: '1e3', minWorkers: '5', maxWorkers: '2', maxRestarts: '-1', command: '"' }, null);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual({
      name: 'Give the run a name',
      command: 'the command has an unclosed " quote',
      samples: 'Samples must be a whole number',
      maxWorkers: 'Max workers (2) must be at least min workers (5)',
      maxRestarts: 'Max restarts must be a whole number',
    });
  });
});
