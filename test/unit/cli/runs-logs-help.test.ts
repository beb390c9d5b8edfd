// Issue 17 defect 14: `runs logs --help` showed a line format ("[beta] step 120 loss 0.0412") the command never
// prints (the trainers' progress lines are left out; nothing prints "step N loss X"). Its examples now come from
// what the coordinator and the bundled trainer write, and its JSON objects are the ones --follow --json prints.
import { describe, expect, it } from 'vitest';
import { runsLogsCommand } from '../../../src-main/cli/commands/runs/runs-logs';
import { Harness } from '../coordinator/harness';

describe('runs logs --help', () => {
  it('shows only line formats the command prints', () => {
    const help = runsLogsCommand.usage;
    expect(help).not.toMatch(/step \d+ loss/);
    const h = new Harness();
    const [alpha] = h.activeWorkers('alpha', 'gamma');
    const run = h.svc.startRun(h.spec({ minWorkers: 1 }));
    h.run(1000);
    h.run(15_000, [alpha!]); // gamma goes silent and is declared failed
    const example = help.split('\n').find((l) => l.includes('[gpu-share] relaunching'))!.trim();
    expect(h.svc.runOutput(run.id)).toContain(example);
    expect(help).toContain('{"runId", "skipped", "note"}');
  });
});
