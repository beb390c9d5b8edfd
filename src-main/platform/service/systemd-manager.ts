/**
 * systemd for an installed worker: `systemctl [--user] daemon-reload`, `enable --now`, `disable --now`,
 * `is-active` / `is-enabled`. A user unit stops at logout unless the account lingers, so install turns lingering
 * on (loginctl enable-linger) when it can and says so when it cannot. Where systemd is not the machine's service
 * manager (a container: no /run/systemd/system), nothing is run and the messages say how to start the worker.
 */
import type { RunCommand } from './command-runner';
import { said, stepRecorder, type ManagerState, type ServiceManager } from './service-manager';
import { SYSTEMD_UNIT, type ServiceScope } from './service-layout';

export interface SystemdContext {
  scope: ServiceScope;
  run: RunCommand;
  /** systemd is PID 1 (sd_booted: /run/systemd/system exists). */
  booted: boolean;
  /** The account, for loginctl (user scope). */
  user: string;
  /** The unit's ExecStart, as a shell line, for "start it by hand". */
  execLine: string;
  /** Lingering was turned on by this install (the manifest says), so uninstall turns it off again. */
  lingerByInstall?: boolean;
}

export interface SystemdManager extends ServiceManager {
  /** Whether enable() turned lingering on (recorded in the manifest). */
  lingerEnabled(): boolean;
}

export function systemdManager(ctx: SystemdContext): SystemdManager {
  const scopeFlag = ctx.scope === 'user' ? ['--user'] : [];
  const ctl = ctx.scope === 'user' ? 'systemctl --user' : 'systemctl';
  const journal = ctx.scope === 'user' ? `journalctl --user -u ${SYSTEMD_UNIT} -f` : `journalctl -u ${SYSTEMD_UNIT} -f`;
  const notBooted = `systemd is not this machine's service manager (no /run/systemd/system, as in most containers)`;
  let lingerOn = false;
  const { run, step } = stepRecorder(ctx.run);

  return {
    name: 'systemd',
    startHint: ctx.booted ? `${ctl} start ${SYSTEMD_UNIT}` : `run it in the background yourself (no systemd here): ${ctx.execLine}`,
    logHint: `${ctl} status ${SYSTEMD_UNIT}; ${journal}`,
    lingerEnabled: () => lingerOn,
    async enable() {
      if (!ctx.booted) return step(false, `${notBooted}: the unit is written but nothing starts it. Start the worker yourself: ${ctx.execLine}`);
      const reload = await run('systemctl', [...scopeFlag, 'daemon-reload']);
      if (reload.code !== 0) return step(false, `${ctl} daemon-reload failed (${said(reload)}): the unit is written but not started; ${ctx.scope === 'user' ? 'is there a user session (loginctl enable-linger, or log in)?' : 'run it as root (sudo)'}`);
      const enable = await run('systemctl', [...scopeFlag, 'enable', '--now', SYSTEMD_UNIT]);
      if (enable.code !== 0) return step(false, `${ctl} enable --now ${SYSTEMD_UNIT} failed (${said(enable)}); see ${journal}`);
      if (ctx.scope === 'user') {
        const linger = await run('loginctl', ['show-user', ctx.user, '--property=Linger', '--value']);
        if (linger.stdout.trim() !== 'yes') {
          const on = await run('loginctl', ['enable-linger', ctx.user]);
          if (on.code === 0) lingerOn = true;
          else return step(true, `started; it starts again when ${ctx.user} logs in, but not at boot before that: \`sudo loginctl enable-linger ${ctx.user}\` fixes it (${said(on)})`);
        }
      }
      return step(true, `enabled and started (${ctl}); it starts again at boot and after a crash`);
    },
    async disable() {
      if (!ctx.booted) return step(true, `${notBooted}: nothing to stop there; stop a worker you started by hand yourself`);
      const off = await run('systemctl', [...scopeFlag, 'disable', '--now', SYSTEMD_UNIT]);
      if (off.code !== 0 && !/not loaded|does not exist|No such file/i.test(said(off))) {
        return step(false, `${ctl} disable --now ${SYSTEMD_UNIT} failed (${said(off)})${ctx.scope === 'system' ? ': run it as root (sudo)' : ''}`);
      }
      if (ctx.lingerByInstall) await run('loginctl', ['disable-linger', ctx.user]);
      return step(true, 'stopped and disabled');
    },
    async forget() {
      if (!ctx.booted) return step(true, '');
      const reload = await run('systemctl', [...scopeFlag, 'daemon-reload']);
      return step(reload.code === 0, reload.code === 0 ? '' : `${ctl} daemon-reload failed (${said(reload)})`);
    },
    async state(): Promise<ManagerState> {
      if (!ctx.booted) return { available: false, enabled: null, active: null, detail: notBooted };
      const active = await ctx.run('systemctl', [...scopeFlag, 'is-active', SYSTEMD_UNIT]);
      const enabled = await ctx.run('systemctl', [...scopeFlag, 'is-enabled', SYSTEMD_UNIT]);
      if (active.code === null) return { available: false, enabled: null, active: null, detail: said(active) };
      const a = active.stdout.trim() || said(active);
      const e = enabled.stdout.trim() || said(enabled);
      return { available: true, enabled: e === 'enabled', active: a === 'active', detail: `${a}, ${e}` };
    },
  };
}
