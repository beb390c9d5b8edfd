/**
 * A project run's readiness gate: every worker that could be a member is told to `prepare` the run's snapshot
 * (again when it joins anew), its latest `prepared` report is kept on the run (RunProject.members), and a worker
 * whose project is not ready is no candidate yet — planMembers refuses it with the reason ("fetching the
 * project: 3.1 of 12.0 MiB", "python cannot import 'sentencepiece' (requirements.txt line 3)"). So a late member
 * fetches before it is placed and never holds the others in the rendezvous, and one that cannot train (disk full,
 * a module missing) is held out while the run goes on with the others. Each `prepare` names the other members
 * as peers (and the workers whose cache holds the snapshot, snapshot-peers.ts), ranked by the link map, with
 * the snapshot's peer key, so members fetch from each other.
 */
import type { LinkMeasurement } from '../../../../src-shared/links/link-matrix';
import type { Clock } from '../../../platform/ports';
import { splitDataFiles, type DataFile } from '../../../../src-shared/projects/data-shards';
import type { LaunchProject, PreparedReport, SnapshotManifest } from '../../../../src-shared/projects/project-protocol';
import { parseRequirements, withPythonCheck } from '../../../../src-shared/projects/requirements';
import type { RunProject, RunProjectMember } from '../../../../src-shared/training';
import type { Membership } from '../membership';
import { wantsMore, type LaunchWhy, type ProjectGateState, type RunRecord } from './run-record';
import { peerPlan } from '../links';

/** What the gate reads of the coordinator's project store (A's ProjectStore behind it in the app). */
export interface ProjectFiles {
  manifest(snapshot: string): SnapshotManifest | null;
  /** A small file of the store as text (requirements.txt); null when missing or unreadable. */
  readText(sha256: string): string | null;
}

export type { ProjectGateState };


export interface ProjectGateDeps {
  pool: Pick<Membership, 'allWorkers' | 'worker' | 'queue'>;
  /** Where members reach each other (the rendezvous' choice, as the link survey probes) and the measured links. */
  trustAdvertised?: boolean;
  links?: () => readonly LinkMeasurement[];
  clock?: Pick<Clock, 'monotonic'>;
}

/**
 * A worker that could not prepare (a module missing, the disk full) is asked again this long after it was last
 * asked, so a person who installed the module or freed the disk sees it join without restarting its agent.
 */
export const PREPARE_RETRY_MS = 60_000;

const MIB = 1024 * 1024;
const REQUIREMENTS = 'requirements.txt';

function gateOf(run: RunRecord): ProjectGateState {
  run.projectGate ??= { asked: new Map(), askedAt: new Map(), dataFiles: null };
  return run.projectGate;
}

/**
 * Fills what a run's project needs from its manifest: the modules every member must import (requirements.txt at
 * the project's top, then --python-check) with notes for the lines left out, and the data files in shard mode.
 * Called at start (modules empty) and after a restart (modules as kept; only the file list is read again).
 */
export function initProject(run: RunRecord, files: ProjectFiles | null): void {
  const project = run.project;
  if (!project) return;
  const manifest = files?.manifest(project.snapshot) ?? null;
  if (project.modules.length === 0) {
    const entry = manifest?.entries.find((e) => e.path === REQUIREMENTS);
    const text = entry?.kind === 'file' ? files!.readText(entry.sha256) : null;
    const parsed = text === null ? { modules: [], notes: [] } : parseRequirements(text);
    project.modules = withPythonCheck(parsed.modules, run.spec.pythonCheck);
    for (const note of parsed.notes) if (!project.notes.includes(note)) project.notes.push(note);
  }
  const gate = gateOf(run);
  if (project.dataMode !== 'shard' || project.data === null) {
    gate.dataFiles = null;
    return;
  }
  const prefix = `${project.data}/`;
  gate.dataFiles = manifest
    ? manifest.entries.flatMap((e) => (e.kind === 'file' && e.path.startsWith(prefix) ? [{ name: e.path.slice(prefix.length), size: e.size }] : []))
    : null;
}

/** Whether the run lets this worker take part at all (allowed hosts, torch, a GPU): those are told to prepare. */
function mayTakePart(run: RunRecord, w: { node: string; hasTorch: boolean; gpus: readonly unknown[] }): boolean {
  const placement = run.spec.placement ?? {};
  if (placement.allowedHosts && placement.allowedHosts.length > 0 && !placement.allowedHosts.includes(w.node)) return false;
  if (run.spec.launcher === 'torchrun' && !w.hasTorch) return false;
  if ((run.spec.useGpus || placement.requireCuda === true) && w.gpus.length === 0) return false;
  return true;
}

function setMember(run: RunRecord, member: RunProjectMember): void {
  const members = run.project!.members;
  const i = members.findIndex((m) => m.workerId === member.workerId);
  if (i === -1) members.push(member);
  else members[i] = member;
}

/**
 * Tells every live worker that could be a member and was not told in its current incarnation to prepare the run's
 * project; forgets workers that failed or left (they are told again when they come back). Returns whether the
 * run's project members changed.
 */
export function askToPrepare(deps: ProjectGateDeps, run: RunRecord): boolean {
  const project = run.project;
  if (!project) return false;
  const gate = gateOf(run);
  let changed = false;
  const eligible = deps.pool.allWorkers().filter((w) => (w.state === 'syncing' || w.state === 'active') && mayTakePart(run, w));
  const live = new Set(eligible.map((w) => w.workerId));
  const plan = peerPlan(deps, project.snapshot, live);
  const peerKey = plan.peerKey;
  const now = deps.clock?.monotonic() ?? 0;
  for (const [index, w] of eligible.entries()) {
    const again = gate.asked.get(w.workerId) === w.incarnation;
    if (again && !retryDue(run, gate, w.workerId, now)) continue;
    const rec = deps.pool.worker(w.workerId);
    if (!rec) continue;
    const peers = plan.peersFor(w.workerId);
    const stripe = { index, count: eligible.length };
    rec.mailbox.queue({ kind: 'prepare', runId: run.id, snapshot: project.snapshot, dataDir: project.data, dataMode: project.dataMode, modules: project.modules.map((m) => ({ ...m })), peers, peerKey, stripe });
    gate.asked.set(w.workerId, w.incarnation);
    gate.askedAt.set(w.workerId, now);
    // A member of the generation running now (kept over a coordinator restart) stays ready while it answers; one
    // asked again after a failure stays failed until it answers (its hold is not announced a second time).
    const kept = project.members.find((m) => m.workerId === w.workerId);
    const keep = kept?.status === 'ready' ? run.workerIds.includes(w.workerId) : kept?.status === 'failed' && again;
    if (!keep) {
      setMember(run, { workerId: w.workerId, node: w.node, status: 'fetching', detail: 'asked to prepare the project' });
    }
    changed = true;
  }
  const before = project.members.length;
  project.members = project.members.filter((m) => live.has(m.workerId) || run.workerIds.includes(m.workerId));
  for (const id of gate.asked.keys()) if (!live.has(id)) gate.asked.delete(id);
  for (const id of gate.askedAt.keys()) if (!live.has(id)) gate.askedAt.delete(id);
  return changed || project.members.length !== before;
}

/** Whether this worker failed to prepare and was last asked PREPARE_RETRY_MS ago or more. */
function retryDue(run: RunRecord, gate: ProjectGateState, workerId: number, now: number): boolean {
  const member = run.project?.members.find((m) => m.workerId === workerId);
  return member?.status === 'failed' && now - (gate.askedAt.get(workerId) ?? now) >= PREPARE_RETRY_MS;
}

/** Every tick: asks again the workers whose prepare failed long enough ago (cheap when none did). */
export function retryFailedPrepares(deps: ProjectGateDeps, run: RunRecord): boolean {
  const gate = run.projectGate;
  if (!gate || !run.project?.members.some((m) => m.status === 'failed')) return false;
  const now = deps.clock?.monotonic() ?? 0;
  if (!run.project.members.some((m) => retryDue(run, gate, m.workerId, now))) return false;
  return askToPrepare(deps, run);
}

/** The words a person reads for a report: "fetching the project: 3.1 of 12.0 MiB", or the agent's own detail. */
export function preparedDetail(r: Pick<PreparedReport, 'status' | 'detail' | 'bytesDone' | 'bytesTotal'>): string {
  if (r.status !== 'fetching') return r.detail;
  if (r.bytesTotal !== undefined && r.bytesTotal > 0) {
    return `fetching the project: ${((r.bytesDone ?? 0) / MIB).toFixed(1)} of ${(r.bytesTotal / MIB).toFixed(1)} MiB`;
  }
  return r.detail ? `fetching the project: ${r.detail}` : 'fetching the project';
}

/**
 * A worker's `prepared` report for the run: kept when it is about the run's snapshot. Returns its new status when
 * it changed (ready: the run may place it; failed: it is held out), null when nothing a plan depends on changed.
 */
export function notePrepared(run: RunRecord, workerId: number, node: string, r: PreparedReport): RunProjectMember['status'] | null {
  const project = run.project;
  if (!project || r.snapshot !== project.snapshot) return null;
  const before = project.members.find((m) => m.workerId === workerId);
  setMember(run, { workerId, node, status: r.status, detail: preparedDetail(r) });
  return before?.status === r.status ? null : r.status;
}

/** Why this worker may not be placed yet (without its node's name), or null when its project is ready. */
export function notReadyReason(run: RunRecord, workerId: number): string | null {
  const project = run.project;
  if (!project) return null;
  const member = project.members.find((m) => m.workerId === workerId);
  if (!member) return 'not yet asked to prepare the project';
  if (member.status === 'ready') return null;
  return member.detail || (member.status === 'fetching' ? 'fetching the project' : 'could not prepare the project');
}

/** What a generation's plan reads of a project run (generation-plan.ts): the snapshot, data folder, last split, files. */
export type ProjectFacts = Pick<RunProject, 'snapshot' | 'data' | 'dataMode' | 'dataSplit'> & { dataFiles: readonly DataFile[] | null };

/** The run's project as a plan reads it; null for a run without one. */
export function projectFacts(run: RunRecord): ProjectFacts | null {
  const p = run.project;
  return p ? { snapshot: p.snapshot, data: p.data, dataMode: p.dataMode, dataSplit: p.dataSplit ?? null, dataFiles: run.projectGate?.dataFiles ?? null } : null;
}

/**
 * A new generation's data split (shard mode): the data files over its members' nodes in ring order, re-split from
 * the previous generation's (kept on the run, so a coordinator restart does not reshuffle). Null in replicate mode.
 */
export function splitForGeneration(project: ProjectFacts | null, ringNodes: readonly string[]): Readonly<Record<string, readonly string[]>> | null {
  if (!project || project.dataMode !== 'shard' || project.data === null) return null;
  const split = splitDataFiles(project.dataFiles ?? [], ringNodes, (project.dataSplit ?? null) as Record<string, string[]> | null);
  for (const names of Object.values(split)) Object.freeze(names);
  return Object.freeze(split);
}

/** One member's launch plan project: the snapshot, and its files in shard mode (`split`; null in replicate). */
export function launchProjectFor(project: ProjectFacts | null, split: Readonly<Record<string, readonly string[]>> | null, node: string): LaunchProject | null {
  if (!project) return null;
  const files = project.dataMode === 'shard' && project.data !== null ? (split?.[node] ?? []) : null;
  return { snapshot: project.snapshot, dataDir: project.data, dataMode: project.dataMode, dataFiles: files ? [...files] : null };
}

/** What acting on a `prepared` report needs of the run controller. */
export interface ReadinessContext {
  say(run: RunRecord, text: string): void;
  emit(run: RunRecord): void;
  reconcile(run: RunRecord, cause: string, why: LaunchWhy): void;
  /** A running run re-plans after the settle (one heartbeat interval), as for a join. */
  settleSoon(run: RunRecord): void;
}

/**
 * A worker's project readiness changed: ready, the run may place it (a running run after the settle); failed
 * while a member, the run goes on without it now; otherwise the run's reason and page say where it stands.
 */
export function onPrepared(ctx: ReadinessContext, run: RunRecord, rec: { id: number; node: string }, report: PreparedReport): void {
  const changed = notePrepared(run, rec.id, rec.node, report);
  if (changed === 'failed') ctx.say(run, `${rec.node} is held out of the run: ${report.detail}`);
  if (changed === 'ready') ctx.say(run, `${rec.node} prepared the project${report.detail ? `: ${report.detail}` : ''}`);
  const resumeOr = run.state === 'paused' ? 'resume' : 'start';
  if (changed === 'failed' && run.workerIds.includes(rec.id)) ctx.reconcile(run, `${rec.node}: ${report.detail}`, 'shrink');
  else if (changed === 'ready' && wantsMore(run)) {
    if (run.state === 'running') ctx.settleSoon(run);
    else ctx.reconcile(run, `${rec.node} prepared the project`, resumeOr);
  } else if (run.state !== 'running' && run.project?.snapshot === report.snapshot) {
    // A waiting run's reason follows the fetch ("3.1 of 12.0 MiB"), not only the status.
    ctx.reconcile(run, 'a worker\'s project readiness changed', resumeOr);
  }
  ctx.emit(run);
}
