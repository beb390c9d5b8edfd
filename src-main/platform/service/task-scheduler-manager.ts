/**
 * Task Scheduler for an installed worker: `schtasks /Create /XML` (then `/Run`) to register and start it,
 * `schtasks /End` and `/Delete` to stop and remove it, `schtasks /Query /V` for its state.
 */
import type { RunCommand } from './command-runner';
import { said, stepRecorder, type ManagerState, type ServiceManager } from './service-manager';
import { TASK_NAME, type ServiceScope } from './service-layout';

export interface TaskSchedulerContext {
  scope: ServiceScope;
  run: RunCommand;
  xmlFile: string;
  logFile: string;
}

export function taskSchedulerManager(ctx: TaskSchedulerContext): ServiceManager {
  const recorder = stepRecorder(ctx.run);
  const run = (args: string[]) => recorder.run('schtasks', args);
  const step = recorder.step;
  const admin = ctx.scope === 'system' ? ' from an administrator prompt' : '';
  return {
    name: 'Task Scheduler',
    startHint: `schtasks /Run /TN "${TASK_NAME}"${admin}`,
    logHint: `schtasks /Query /TN "${TASK_NAME}" /V /FO LIST; Get-Content -Wait "${ctx.logFile}"`,
    async enable() {
      const create = await run(['/Create', '/TN', TASK_NAME, '/XML', ctx.xmlFile, '/F']);
      if (create.code !== 0) return step(false, `schtasks /Create failed (${said(create)})${ctx.scope === 'system' ? ': run it from an administrator prompt' : ''}`);
      const start = await run(['/Run', '/TN', TASK_NAME]);
      if (start.code !== 0) return step(false, `the task is registered but /Run failed (${said(start)}); it starts at the next ${ctx.scope === 'user' ? 'logon' : 'boot'}`);
      return step(true, `registered and started (Task Scheduler); it starts again at ${ctx.scope === 'user' ? 'logon' : 'boot'} and after a failure`);
    },
    async disable() {
      await run(['/End', '/TN', TASK_NAME]);
      const del = await run(['/Delete', '/TN', TASK_NAME, '/F']);
      if (del.code !== 0 && !/cannot find|does not exist/i.test(said(del))) return step(false, `schtasks /Delete failed (${said(del)})${admin ? `: run it${admin}` : ''}`);
      return step(true, 'stopped and removed from Task Scheduler');
    },
    forget: async () => step(true, ''),
    async state(): Promise<ManagerState> {
      const query = await ctx.run('schtasks', ['/Query', '/TN', TASK_NAME, '/V', '/FO', 'LIST']);
      if (query.code === null) return { available: false, enabled: null, active: null, detail: said(query) };
      if (query.code !== 0) return { available: true, enabled: false, active: false, detail: 'no such task' };
      const status = /^Status:\s*(.+)$/m.exec(query.stdout)?.[1]?.trim() ?? 'registered';
      return { available: true, enabled: status !== 'Disabled', active: status === 'Running', detail: status };
    },
  };
}
