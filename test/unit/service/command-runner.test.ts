/** The real command runner the service steps use: exit codes, output, and a program that is not installed. */
import { describe, expect, it } from 'vitest';
import { commandLine, execCommand } from '../../../src-main/platform/service/command-runner';

describe('execCommand', () => {
  it('gives the exit code and the output of a program that ran', async () => {
    expect(await execCommand('sh', ['-c', 'echo out; echo err >&2; exit 3'])).toEqual({ code: 3, stdout: 'out\n', stderr: 'err\n' });
    expect(await execCommand('sh', ['-c', 'true'])).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('says a program is not installed instead of throwing (no systemctl, no launchctl here)', async () => {
    expect(await execCommand('gpu-share-no-such-program', ['x'])).toEqual({ code: null, stdout: '', stderr: 'gpu-share-no-such-program: not found on the PATH' });
  });

  it('writes a command as a person would type it', () => {
    expect(commandLine('schtasks', ['/Run', '/TN', 'GPU Share worker'])).toBe("schtasks /Run /TN 'GPU Share worker'");
  });
});
