/**
 * The `prepare` instruction on the agent: have the run's snapshot here (less the data folder in shard mode),
 * unpacked read-only, and the modules it needs importable, then say so with a `prepared` report — `fetching`
 * (bytes done of those missing, at most once a second), `ready`, or `failed` with a reason a person can act on.
 * A prepare of a snapshot already here fetches nothing and says so in the log. Sent again while one is under way,
 * the same work is shared, not repeated.
 */
import type { PrepareProjectInstruction, PreparedReport, ProjectFileEntry } from '../../../src-shared/projects/project-protocol';
import type { Clock } from '../../platform/ports';
import { filterInheritedEnv } from '../../platform/runs/child-env';
import { checkModules } from '../../platform/projects/module-check';
import { isUnder } from '../../platform/projects/project-layout';
import { ProjectError, SnapshotStore } from './snapshot-store';
import type { FetchSource } from './project-source';

/** At most one `fetching` report a second. */
export const PREPARE_PROGRESS_INTERVAL_MS = 1000;
const DETAIL_MAX = 2000;

export interface ProjectPreparerOptions {
  store: SnapshotStore;
  /** Where to fetch this instruction's snapshot from (peers first when the coordinator named some). */
  source: (instruction: PrepareProjectInstruction) => FetchSource;
  clock: Clock;
  log: (line: string) => void;
  /** The Python the agent trains with (null: none found). */
  python: () => string | null;
  env: NodeJS.ProcessEnv;
}

type Outcome = { status: 'ready' | 'failed'; detail: string };

export class ProjectPreparer {
  /** Prepares under way, by snapshot folder (snapshot and data mode): a repeat waits for the first. */
  private readonly inFlight = new Map<string, Promise<Outcome>>();

  constructor(private readonly opts: ProjectPreparerOptions) {}

  /** Carries out `instruction`, sending each report through `report`; never throws. */
  async prepare(instruction: PrepareProjectInstruction, report: (r: PreparedReport) => void): Promise<Outcome> {
    const { runId, snapshot } = instruction;
    const skip = instruction.dataMode === 'shard' ? instruction.dataDir : null;
    const key = `${snapshot}:${skip ?? ''}:${instruction.modules.map((m) => m.module).join(',')}`;
    let work = this.inFlight.get(key);
    if (!work) {
      work = this.run(instruction, skip, report).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, work);
    }
    const outcome = await work;
    report({ type: 'prepared', runId, snapshot, status: outcome.status, detail: outcome.detail.slice(0, DETAIL_MAX) });
    return outcome;
  }

  private async run(instruction: PrepareProjectInstruction, skip: string | null, report: (r: PreparedReport) => void): Promise<Outcome> {
    const { runId, snapshot } = instruction;
    const { store, log, clock } = this.opts;
    const short = `${snapshot.slice(0, 6)}…`;
    const holder = `prepare:${runId}:${snapshot}`;
    const source = this.opts.source(instruction);
    let lastReportMs = -Infinity;
    const progress = (bytesDone: number, bytesTotal: number) => {
      const now = clock.now();
      if (now - lastReportMs < PREPARE_PROGRESS_INTERVAL_MS && bytesDone < bytesTotal) return;
      lastReportMs = now;
      report({ type: 'prepared', runId, snapshot, status: 'fetching', detail: `fetching the project from ${source.name}`, bytesDone, bytesTotal });
    };
    try {
      const manifest = await store.manifest(snapshot, source);
      const files = manifest.entries.filter((e): e is ProjectFileEntry => e.kind === 'file' && (skip === null || !isUnder(e.path, skip)));
      const fetched = await store.ensureBlobs(snapshot, files, source, holder, progress);
      const folder = store.unpack(snapshot, manifest, skip);
      store.used(files);
      const from = source.summary ? ` (${source.summary()})` : '';
      const how = fetched.files === 0 ? 'already here: nothing fetched' : `fetched ${SnapshotStore.describe(fetched)} from ${source.name}${from}`;
      log(`snapshot ${short} ${how}`);
      const modules = await this.checkModules(folder, instruction);
      if (modules) {
        log(`snapshot ${short} for run ${runId}: ${modules}`);
        return { status: 'failed', detail: modules };
      }
      return { status: 'ready', detail: fetched.files === 0 ? `snapshot ${short} already here` : how };
    } catch (error) {
      const detail = error instanceof ProjectError ? error.message : `could not prepare the project: ${error instanceof Error ? error.message : String(error)}`;
      log(`snapshot ${short} for run ${runId}: ${detail}`);
      return { status: 'failed', detail };
    } finally {
      source.close?.();
      store.cache.unpin(holder);
    }
  }

  /** Why the modules the run needs cannot be imported here, or null when they all can (or none are named). */
  private async checkModules(folder: string, instruction: PrepareProjectInstruction): Promise<string | null> {
    if (instruction.modules.length === 0) return null;
    const python = this.opts.python();
    if (!python) return 'no Python with PyTorch found on this machine to check the project\'s modules with (set GPU_SHARE_PYTHON to one)';
    const result = await checkModules(python, instruction.modules, { cwd: folder, env: filterInheritedEnv(this.opts.env) });
    return result.ok ? null : result.detail;
  }
}
