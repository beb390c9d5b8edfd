// Issue 17 defect 14: the default max workers was 64 in the CLI and 8 in the app's form (the example run's). One
// source now: `runs start` (with or without --example), its help, the API's schema, the app's example run and the
// form's fallback all say DEFAULT_MAX_WORKERS.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUN_SPEC_USAGE, runSpecFrom } from '../../../src-main/cli/commands/runs/run-spec-args';
import { exampleRun } from '../../../src-main/app/app-core-helpers';
import { fieldsFromSpec } from '../../../src-renderer/features/runs/start/run-form';
import { DEFAULT_MAX_WORKERS, runSpecSchema } from '../../../src-shared/worker-protocol';
import { hardwareSnapshot } from '../helpers/snapshots';

const assets = path.resolve(__dirname, '..', '..', '..', 'assets');

describe('the default max workers', () => {
  it('is the same in the CLI, its help, the API, the app example and the form', () => {
    const cliExample = runSpecFrom({ example: true }, [], { GPU_SHARE_ASSETS: assets });
    const cliOwn = runSpecSchema.parse(runSpecFrom({ samples: '10' }, ['t.py'], {}));
    const appExample = exampleRun(assets, hardwareSnapshot());
    expect(cliExample.maxWorkers).toBe(DEFAULT_MAX_WORKERS);
    expect(cliOwn.maxWorkers).toBe(DEFAULT_MAX_WORKERS);
    expect(appExample.maxWorkers).toBe(DEFAULT_MAX_WORKERS);
    expect(fieldsFromSpec(appExample).maxWorkers).toBe(String(DEFAULT_MAX_WORKERS));
    expect(fieldsFromSpec({ command: ['t.py'], samples: 1 }).maxWorkers).toBe(String(DEFAULT_MAX_WORKERS));
    expect(RUN_SPEC_USAGE).toContain(`at most this many train (default ${DEFAULT_MAX_WORKERS})`);
    // Issue 25 item 8: --example's help said "up to 8 workers" while the form and the run said 64.
    expect(RUN_SPEC_USAGE).toContain(`10000 samples, up to ${DEFAULT_MAX_WORKERS} workers)`);
    expect(RUN_SPEC_USAGE).not.toMatch(/up to 8 workers/);
  });
});
