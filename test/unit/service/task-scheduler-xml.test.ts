/**
 * The Task Scheduler XML: written as UTF-16 with a byte-order mark (what schtasks /XML reads), valid against the
 * Task Scheduler schema's types it uses (test/fixtures/service/task-scheduler-subset.xsd, transcribed from
 * Microsoft's reference: the whole XSD is not published as a file), and its action reads back as the launch.
 */
import { describe, expect, it } from 'vitest';
import { renderDefinition } from '../../../src-main/platform/service/service-install';
import { serviceLayout } from '../../../src-main/platform/service/service-layout';
import { cmdQuote, renderTaskXml, taskArguments } from '../../../src-main/platform/service/task-scheduler-xml';
import { hasProgram, sampleLaunch } from './service-fixtures';
import { validateTask } from './xml-checks';

const layout = serviceLayout({ platform: 'win32', scope: 'user', userDataDir: 'C:\\Users\\ann\\AppData\\Roaming\\GPU Share', home: 'C:\\Users\\ann', env: {} });
const launch = sampleLaunch({
  executable: 'C:\\Program Files\\nodejs\\node.exe',
  args: ['C:\\Users\\ann\\gpu-share\\dist\\main\\cli.cjs', 'worker', '--join', 'https://192.168.1.20:7421', '--name', 'box-1', '--data-dir', 'C:\\Users\\ann\\AppData\\Roaming\\GPU Share\\workers\\box-1'],
  env: { GPU_SHARE_WORKER_STATUS_FILE: 'C:\\Users\\ann\\AppData\\Roaming\\GPU Share\\workers\\box-1\\service-status.json' },
  workingDir: 'C:\\Users\\ann\\AppData\\Roaming\\GPU Share\\workers\\box-1',
  tokenFile: layout.tokenFile,
  logFile: layout.logFile,
  description: 'GPU Share worker box-1 & <friends>',
});
const request = (scope: 'user' | 'system') => ({ layout: { ...layout, scope }, launch, node: 'box-1', coordinator: 'https://192.168.1.20:7421', token: 'T', windowsUserId: 'DESKTOP-1\\ann' });

describe('the scheduled task of an installed worker', () => {
  it.skipIf(!hasProgram('xmllint'))('is UTF-16 with a byte-order mark and valid against the Task Scheduler schema, at logon and at boot', () => {
    for (const scope of ['user', 'system'] as const) {
      const bytes = renderDefinition(request(scope), '2026-11-26T04:00:00');
      expect([...bytes.subarray(0, 2)]).toEqual([0xff, 0xfe]);
      expect(validateTask(bytes)).toEqual({ status: 0, output: 'doc.xml validates' });
    }
  });

  it.skipIf(!hasProgram('xmllint'))('is refused by the schema with a restart count above 255 (the check has teeth)', () => {
    const xml = renderTaskXml(launch, { scope: 'user', userId: 'ann', date: '2026-11-26T04:00:00' }).replace('<Count>255</Count>', '<Count>999</Count>').replace('encoding="UTF-16"', 'encoding="UTF-8"');
    expect(validateTask(xml).status).not.toBe(0);
  });

  it('starts at the person\'s logon as them, or at boot as SYSTEM, restarted after a failure, never stopped for running long', () => {
    const user = renderTaskXml(launch, { scope: 'user', userId: 'DESKTOP-1\\ann', date: '2026-11-26T04:00:00' });
    expect(user).toMatch(/<LogonTrigger>\s*<Enabled>true<\/Enabled>\s*<UserId>DESKTOP-1\\ann<\/UserId>/);
    expect(user).toMatch(/<LogonType>InteractiveToken<\/LogonType>/);
    expect(user).toMatch(/<RestartOnFailure>\s*<Interval>PT1M<\/Interval>\s*<Count>255<\/Count>/);
    expect(user).toContain('<ExecutionTimeLimit>PT0S</ExecutionTimeLimit>');
    expect(user).toContain('<DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>');
    const system = renderTaskXml(launch, { scope: 'system', userId: 'DESKTOP-1\\ann', date: '2026-11-26T04:00:00' });
    expect(system).toContain('<BootTrigger>');
    expect(system).toContain('<UserId>S-1-5-18</UserId>');
    expect(system).not.toContain('LogonTrigger');
  });

  it('sets the token file\'s path (not the token) and the other variables, runs the program until it exits 0, appending to the log', () => {
    expect(taskArguments(launch)).toBe(
      '/d /s /c "' +
        `set "GPU_SHARE_WORKER_STATUS_FILE=${launch.env.GPU_SHARE_WORKER_STATUS_FILE}" && ` +
        `set "GPU_SHARE_JOIN_TOKEN_FILE=${layout.tokenFile}" && ` +
        'for /l %i in (0,0,1) do @(' +
        `${[launch.executable, ...launch.args].map((a) => `"${a}"`).join(' ')} >> "${layout.logFile}" 2>&1 && exit 0 & ping -n 11 127.0.0.1 >nul)"`,
    );
    expect(taskArguments(launch)).not.toContain('T"');
  });

  it('refuses what cmd.exe cannot quote: a double quote or a percent sign', () => {
    expect(() => cmdQuote('C:\\a"b')).toThrow(/contains a double quote/);
    expect(() => cmdQuote('C:\\100%')).toThrow(/contains a percent sign/);
  });
});
