/**
 * `gpu-share nodes start --keep` / `nodes stop --uninstall`: the CLI's Start and keep and Stop and uninstall. A
 * flag on the wrong subcommand is a usage error that says where it goes (before any file is read or any SSH
 * connection made), and each subcommand's help names its flag.
 */
import { describe, expect, it } from 'vitest';
import { UsageError, type CliIo } from '../../../src-main/cli/command';
import { nodesCommand } from '../../../src-main/cli/commands/nodes';

const io: CliIo = { out: () => undefined, err: () => undefined, env: {}, cwd: '/nonexistent' };
const sub = (name: string) => nodesCommand.subcommands.find((c) => c.name === name)!;

describe('nodes --keep / --uninstall', () => {
  it('refuses --keep off start and --uninstall off stop, saying where each goes', async () => {
    await expect(sub('stop').run(['box', '--keep'], io)).rejects.toThrow(UsageError);
    await expect(sub('stop').run(['box', '--keep'], io)).rejects.toThrow(/--keep goes with `nodes start`/);
    await expect(sub('status').run(['box', '--uninstall'], io)).rejects.toThrow(/--uninstall goes with `nodes stop`/);
    await expect(sub('start').run(['box', '--uninstall'], io)).rejects.toThrow(/--uninstall goes with `nodes stop`/);
  });

  it("each subcommand's help names its flag", () => {
    expect(sub('start').usage).toMatch(/--keep +also install the worker as a service there/);
    expect(sub('stop').usage).toMatch(/--uninstall +also remove the service/);
    expect(sub('status').usage).not.toMatch(/--keep|--uninstall/);
  });
});
