/** `gpu-share worker status` and `gpu-share worker uninstall`: report the installed service, or remove it. */
import type { CliIo } from '../../command';
import { serviceStatus } from '../../../platform/service/service-status';
import { uninstallService } from '../../../platform/service/service-uninstall';
import { ManifestError } from '../../../platform/service/service-manifest';
import { parseScopeArgs } from './service-args';
import type { ServiceCliDeps } from './service-cli-deps';

const yesNo = (b: boolean) => (b ? 'yes' : 'no');

/** `work()`, or null after saying in one line that the install record is unreadable (ManifestError names it). */
async function unlessBadRecord<T>(command: string, io: CliIo, work: () => Promise<T>): Promise<T | null> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    io.err(`gpu-share worker ${command}: ${error.message}\n`);
    return null;
  }
}

export async function runWorkerStatus(args: string[], io: CliIo, deps: ServiceCliDeps): Promise<number> {
  const a = parseScopeArgs(args, io, deps, false);
  const status = await unlessBadRecord('status', io, () => serviceStatus(a.layout, deps));
  if (!status) return 1;
  if (a.json) {
    io.out(`${JSON.stringify(status)}\n`);
    return 0;
  }
  const out = (line: string) => io.out(`${line}\n`);
  if (!status.installed) {
    out(`not installed (${a.scope} service; ${status.definitionFile} is not there)${status.install ? ` — a record of an install remains at ${a.layout.manifestFile}: run \`gpu-share worker uninstall\`` : ''}`);
    return 0;
  }
  const m = status.install!;
  const w = status.worker;
  out(`installed: yes (${a.scope} service) — worker "${m.node}" joining ${m.coordinator}`);
  out(`running:   ${yesNo(status.running)}${status.manager ? ` (${status.manager.available ? `${status.manager.detail}` : `${status.manager.detail}; judged from the worker's own status file`})` : ''}`);
  out(`joined:    ${yesNo(status.joined)}${w ? ` (${w.state}${w.workerId !== null ? ` as worker ${w.workerId}` : ''}, pid ${w.pid}${w.alive ? '' : ', not running'}: ${w.detail})` : ' (the worker has not written its status yet)'}`);
  out(`files:     ${m.files.filter((f) => f !== m.logFile).join(', ')}`);
  out(`data:      ${m.dataDir}`);
  if (m.logFile) out(`log:       ${m.logFile}`);
  out(`state and log: ${status.logHint}`);
  if (!status.running) out(`start it: ${status.startHint}`);
  return 0;
}

export async function runWorkerUninstall(args: string[], io: CliIo, deps: ServiceCliDeps): Promise<number> {
  const a = parseScopeArgs(args, io, deps, true);
  const report = await unlessBadRecord('uninstall', io, () => uninstallService(a.layout, deps));
  if (!report) return 1;
  const ok = report.disable?.ok !== false && report.failed.length === 0;
  if (a.json) {
    io.out(`${JSON.stringify({ ok, ...report })}\n`);
    return ok ? 0 : 1;
  }
  const out = (line: string) => io.out(`${line}\n`);
  if (!report.installed) {
    out(`nothing to uninstall: no ${a.scope} worker service is installed (${a.layout.manifestFile} is not there)`);
    return 0;
  }
  if (report.disable && !report.disable.ok) {
    io.err(`gpu-share worker uninstall: ${report.disable.message}; nothing was removed\n`);
    return 1;
  }
  if (report.disable?.message) out(report.disable.message);
  for (const f of report.removed) out(`removed ${f}`);
  for (const d of report.kept) out(`kept ${d} (not empty: the worker's node key and data; delete it to forget this node)`);
  for (const f of report.failed) io.err(`gpu-share worker uninstall: could not remove ${f}\n`);
  return ok ? 0 : 1;
}
