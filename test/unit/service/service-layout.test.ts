/** Where each platform and scope puts the definition, the token file, the log and the data (service-layout.ts). */
import { describe, expect, it } from 'vitest';
import { serviceLayout } from '../../../src-main/platform/service/service-layout';

describe('the paths of an installed worker', () => {
  it('Linux: a user unit in ~/.config/systemd/user (or $XDG_CONFIG_HOME), a system unit in /etc, the journal for logs', () => {
    const user = serviceLayout({ platform: 'linux', scope: 'user', userDataDir: '/home/ann/.config/GPU Share', home: '/home/ann', env: {} });
    expect(user).toMatchObject({ definitionFile: '/home/ann/.config/systemd/user/gpu-share-worker.service', tokenFile: '/home/ann/.config/GPU Share/service/worker.env', logFile: null });
    expect(user.dataDirFor('box 1')).toBe('/home/ann/.config/GPU Share/workers/box_1');
    expect(serviceLayout({ platform: 'linux', scope: 'user', userDataDir: '/x', home: '/home/ann', env: { XDG_CONFIG_HOME: '/cfg' } }).definitionFile).toBe('/cfg/systemd/user/gpu-share-worker.service');
    const system = serviceLayout({ platform: 'linux', scope: 'system', userDataDir: '/root/.config/GPU Share', home: '/root', env: {} });
    expect(system).toMatchObject({ definitionFile: '/etc/systemd/system/gpu-share-worker.service', tokenFile: '/etc/gpu-share/worker.env', manifestFile: '/etc/gpu-share/worker-service.json' });
    expect(system.dataDirFor('box')).toBe('/var/lib/gpu-share-worker');
  });

  it('macOS: a LaunchAgent and a log under ~/Library, or a LaunchDaemon under /Library', () => {
    const user = serviceLayout({ platform: 'darwin', scope: 'user', userDataDir: '/Users/ann/Library/Application Support/GPU Share', home: '/Users/ann', env: {} });
    expect(user).toMatchObject({ definitionFile: '/Users/ann/Library/LaunchAgents/com.gpushare.worker.plist', logFile: '/Users/ann/Library/Logs/GPU Share/worker.log', tokenFile: '/Users/ann/Library/Application Support/GPU Share/service/join-token' });
    const system = serviceLayout({ platform: 'darwin', scope: 'system', userDataDir: '/x', home: '/Users/ann', env: {} });
    expect(system).toMatchObject({ definitionFile: '/Library/LaunchDaemons/com.gpushare.worker.plist', logFile: '/Library/Logs/GPU Share/worker.log' });
  });

  it('Windows: the task XML, token and log in the app data folder, or in ProgramData for --system', () => {
    const user = serviceLayout({ platform: 'win32', scope: 'user', userDataDir: 'C:\\Users\\ann\\AppData\\Roaming\\GPU Share', home: 'C:\\Users\\ann', env: {} });
    expect(user).toMatchObject({ serviceName: 'GPU Share worker', definitionFile: 'C:\\Users\\ann\\AppData\\Roaming\\GPU Share\\service\\worker-task.xml', logFile: 'C:\\Users\\ann\\AppData\\Roaming\\GPU Share\\service\\worker.log' });
    const system = serviceLayout({ platform: 'win32', scope: 'system', userDataDir: 'C:\\x', home: 'C:\\Users\\ann', env: { ProgramData: 'D:\\ProgramData' } });
    expect(system.tokenFile).toBe('D:\\ProgramData\\GPU Share\\service\\join-token');
    expect(system.dataDirFor('box')).toBe('D:\\ProgramData\\GPU Share\\workers\\box');
  });
});
