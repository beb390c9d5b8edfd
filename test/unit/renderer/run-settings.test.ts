// Issue 17: the run's command and settings on its page — what "Run again" fills the form with. Environment
// variables by name only (their values may be secrets).
import { describe, expect, it } from 'vitest';
import { runSettings } from '../../../src-renderer/features/runs/run-settings';
import { runSnapshot } from '../helpers/snapshots';

describe("a run's settings", () => {
  it('lists the command, env names (never values), workers, comm, GPUs, launcher, restarts and samples', () => {
    const spec = { ...runSnapshot().spec, command: ['/srv/train.py', '--lr', '1e-3', 'two words'], env: { WANDB_API_KEY: 'secret-value', HF_HOME: '/data' }, minWorkers: 2, maxWorkers: 3, maxRestarts: 5, useGpus: true, comm: 'local-sgd' as const, localSgdPeriod: 8, placement: { gpusPerMember: 2 } };
    const settings = runSettings(spec);
    expect(Object.fromEntries(settings.map((s) => [s.label, s.value]))).toEqual({
      Command: "/srv/train.py --lr 1e-3 'two words'",
      Environment: 'HF_HOME, WANDB_API_KEY',
      Workers: 'min 2, max 3',
      Communication: 'local-sgd every 8 steps',
      GPUs: 'yes, 2 per member',
      Launcher: 'torchrun, 1 process per machine',
      'Max restarts': '5',
      Samples: '1000',
    });
    expect(JSON.stringify(settings)).not.toContain('secret-value');
    expect(runSettings(runSnapshot().spec).find((s) => s.label === 'Environment')!.value).toBe('nothing added');
  });
});
