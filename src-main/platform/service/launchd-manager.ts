/**
 * launchd for an installed worker: `launchctl bootstrap gui/UID|system PLIST` to load and start it,
 * `launchctl bootout` to stop and unload it, `launchctl print` for its state (loaded, running, its pid).
 */
import type { RunCommand } from './command-runner';
import { said, stepRecorder, type ManagerState, type ServiceManager } from './service-manager';
import { LAUNCHD_LABEL, type ServiceScope } from './service-layout';

export interface LaunchdContext {
  scope: ServiceScope;
  run: RunCommand;
  uid: number;
  plist: string;
  logFile: string;
}

export function launchdManager(ctx: LaunchdContext): ServiceManager {
  const domain = ctx.scope === 'user' ? `gui/${ctx.uid}` : 'system';
  const target = `${domain}/${LAUNCHD_LABEL}`;
  const recorder = stepRecorder(ctx.run);
  const run = (args: string[]) => recorder.run('launchctl', args);
  const step = recorder.step;
  const sudo = ctx.scope === 'system' ? 'sudo ' : '';
  return {
    name: 'launchd',
    startHint: `${sudo}launchctl bootstrap ${domain} '${ctx.plist}'`,
    logHint: `launchctl print ${target}; tail -f '${ctx.logFile}'`,
    async enable() {
      await run(['bootout', target]); // an earlier install's copy, if loaded: bootstrap refuses a loaded label
      const boot = await run(['bootstrap', domain, ctx.plist]);
      if (boot.code !== 0) return step(false, `launchctl bootstrap ${domain} failed (${said(boot)})${ctx.scope === 'system' ? ': run it with sudo' : ''}`);
      return step(true, `loaded and started (launchd, ${domain}); it starts again at ${ctx.scope === 'user' ? 'login' : 'boot'} and after a crash`);
    },
    async disable() {
      const out = await run(['bootout', target]);
      if (out.code !== 0 && !/No such process|Could not find|not find service/i.test(said(out))) {
        return step(false, `launchctl bootout ${target} failed (${said(out)})${ctx.scope === 'system' ? ': run it with sudo' : ''}`);
      }
      return step(true, 'stopped and unloaded');
    },
    forget: async () => step(true, ''),
    async state(): Promise<ManagerState> {
      const print = await ctx.run('launchctl', ['print', target]);
      if (print.code === null) return { available: false, enabled: null, active: null, detail: said(print) };
      if (print.code !== 0) return { available: true, enabled: false, active: false, detail: 'not loaded' };
      const state = /^\s*state = (.+)$/m.exec(print.stdout)?.[1]?.trim() ?? 'loaded';
      return { available: true, enabled: true, active: state === 'running', detail: state };
    },
  };
}
