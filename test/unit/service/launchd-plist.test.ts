/** The launchd plist: valid against Apple's plist DTD, and read back as the launch it was made from. */
import { describe, expect, it } from 'vitest';
import { renderLaunchdPlist } from '../../../src-main/platform/service/launchd-plist';
import { hasProgram, sampleLaunch } from './service-fixtures';
import { readPlist, validatePlist } from './xml-checks';

const launch = sampleLaunch({ tokenFile: '/Users/ann/Library/Application Support/GPU Share/service/join-token', logFile: '/Users/ann/Library/Logs/GPU Share/worker.log', description: 'box <1> & "two"' });

describe('the launchd plist of an installed worker', () => {
  it.skipIf(!hasProgram('xmllint'))('is a valid property list (Apple\'s DTD), escapes included', () => {
    expect(validatePlist(renderLaunchdPlist(launch, 'user'))).toEqual({ status: 0, output: '' });
    expect(validatePlist(renderLaunchdPlist({ ...launch, runAs: 'ann' }, 'system'))).toEqual({ status: 0, output: '' });
  });

  it.skipIf(!hasProgram('xmllint'))('is refused by the DTD when it is not a plist (the check has teeth)', () => {
    const broken = renderLaunchdPlist(launch, 'user').replace('<key>RunAtLoad</key><true/>', '<key>RunAtLoad</key>');
    expect(validatePlist(broken).output).toMatch(/does not follow the DTD/);
  });

  it('runs the program with its arguments, restarts it after a failure, and names the token file, not the token', () => {
    const plist = readPlist(renderLaunchdPlist(launch, 'user')) as Record<string, unknown>;
    expect(plist.Label).toBe('com.gpushare.worker');
    expect(plist.ProgramArguments).toEqual([launch.executable, ...launch.args]);
    expect(plist.EnvironmentVariables).toEqual({ ...launch.env, GPU_SHARE_JOIN_TOKEN_FILE: launch.tokenFile });
    expect(plist.RunAtLoad).toBe(true);
    expect(plist.KeepAlive).toEqual({ SuccessfulExit: false });
    expect(plist.StandardOutPath).toBe(launch.logFile);
    expect(plist.StandardErrorPath).toBe(launch.logFile);
    expect(plist.WorkingDirectory).toBe(launch.workingDir);
    expect(plist.UserName).toBeUndefined();
  });

  it('as a daemon, runs as the installing account', () => {
    const plist = readPlist(renderLaunchdPlist({ ...launch, runAs: 'ann' }, 'system')) as Record<string, unknown>;
    expect(plist.UserName).toBe('ann');
  });

  it('refuses a value with a control character', () => {
    expect(() => renderLaunchdPlist(sampleLaunch({ workingDir: '/tmp/a\u0001b' }), 'user')).toThrow(/working folder contains a control character/);
  });
});
