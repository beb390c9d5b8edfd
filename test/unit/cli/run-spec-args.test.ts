// `runs start` options → the RunSpec the app's form sends: defaults left to the coordinator, every field
// reachable, and mistakes named by their flag before anything is sent.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src-main/cli/command';
import { HEARTBEAT_TIMEOUT_NOTE, runSpecFrom } from '../../../src-main/cli/commands/runs/run-spec-args';

const assets = path.resolve(__dirname, '..', '..', '..', 'assets');

describe('runSpecFrom', () => {
  it('sends no heartbeat timeout for --heartbeat-timeout: it is the cluster\'s now (runs start prints the note)', () => {
    expect(runSpecFrom({ samples: '10', 'heartbeat-timeout': '2.5' }, ['t.py'], {})).toEqual({ command: ['t.py'], samples: 10 });
    expect(HEARTBEAT_TIMEOUT_NOTE).toMatch(/^note: --heartbeat-timeout is ignored: the heartbeat timeout is the cluster's now.*\(gpu-share serve --heartbeat-timeout S\)$/);
  });

  it('sends what was given and leaves the rest to the schema defaults', () => {
    expect(runSpecFrom({ samples: '500' }, ['/srv/train.py', '--epochs', '3'], {})).toEqual({ command: ['/srv/train.py', '--epochs', '3'], samples: 500 });
  });

  it('maps every form field', () => {
    const spec = runSpecFrom(
      {
        name: 'lora',
        samples: '50000',
        'min-workers': '2',
        'max-workers': '4',
        'max-restarts': '0',
        'nproc-per-node': 'gpu',
        gpus: true,
        launcher: 'direct',
        env: ['A=1', 'B=x=y'],
      },
      ['t.py'],
      {},
    );
    expect(spec).toEqual({
      name: 'lora',
      command: ['t.py'],
      samples: 50000,
      minWorkers: 2,
      maxWorkers: 4,
      maxRestarts: 0,
      nprocPerNode: 'gpu',
      useGpus: true,
      launcher: 'direct',
      env: { A: '1', B: 'x=y' },
    });
  });

  it('--example is the bundled trainer, and flags still override it', () => {
    const spec = runSpecFrom({ example: true, 'max-workers': '2' }, [], { GPU_SHARE_ASSETS: assets });
    expect(spec.command[0]).toBe(path.join(assets, 'trainers', 'ddp_example.py'));
    // Slowed to be watched (issue 17 defect 6): 300 steps × 0.07 s of sleep, about 25 s with the compute.
    expect(spec.command.slice(1)).toEqual(['--steps', '300', '--batch', '32', '--checkpoint-every', '20', '--step-sleep', '0.07']);
    expect(spec).toMatchObject({ samples: 10_000, maxWorkers: 2, name: 'DDP example (synthetic regression)' });
  });

  it('names the flag at fault', () => {
    const bad = (values: Parameters<typeof runSpecFrom>[0], command: string[] = ['t.py']) => () => runSpecFrom(values, command, {});
    expect(bad({ samples: '10' }, [])).toThrow(/^give the training command: gpu-share runs start \[options\] -- SCRIPT/);
    expect(bad({})).toThrow(/^--samples N is required/);
    expect(bad({ example: true }, ['t.py'])).toThrow(new UsageError('give either --example or a training command, not both'));
    expect(bad({ samples: 'many' })).toThrow(new UsageError('--samples must be a whole number, got "many"'));
    expect(bad({ samples: '0' })).toThrow(new UsageError('--samples must be at least 1, got 0'));
    expect(bad({ samples: '10', 'min-workers': '3', 'max-workers': '2' })).toThrow(new UsageError('--min-workers (3) is more than --max-workers (2)'));
    expect(bad({ samples: '10', launcher: 'mpirun' })).toThrow(new UsageError('--launcher: must be torchrun or direct'));
    expect(bad({ samples: '10', env: ['NOEQUALS'] })).toThrow(new UsageError('--env takes KEY=VALUE, got "NOEQUALS"'));
    expect(bad({ samples: '10', env: ['1BAD=x'] })).toThrow(/^--env: /);
    expect(bad({ samples: '10', 'nproc-per-node': '0' })).toThrow(new UsageError('--nproc-per-node must be between 1 and 64, got 0'));
  });
});
