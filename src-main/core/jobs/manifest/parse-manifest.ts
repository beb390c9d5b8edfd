/**
 * Reads a job manifest (TOML, format in docs/jobs.md) into a JobManifest, or into every problem it has, each
 * with its line:column and what to do. Nothing but errors comes back when any error exists, so a bad reload
 * changes nothing. Never throws, whatever the text: a dropped file may be a log, a zip, or hostile.
 */
import { parse, TomlError } from 'smol-toml';
import { utf8ByteLength } from '../../../../src-shared/cluster/read-yaml';
import { closest } from '../../../../src-shared/cluster/yaml-scalars';
import type { HostPolicy, JobSpec, ManifestIssue, ManifestParseResult, PlacementPolicy } from '../../../../src-shared/jobs/types';
import { describeValue, FieldReader, IssueList, type PendingIssue, type Table } from './field-reader';
import { jobId } from './job-id';
import { readHost, readJob } from './read-entries';
import { pathKey, scanTomlSteps, type PathPart, type Place } from './toml-positions';
import { ENTRIES_PER_PIECE, parsePieces } from './toml-pieces';

/** Largest manifest accepted (the API and IPC caps match). 10,000 jobs take about 1 MiB. */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
export const MAX_MANIFEST_JOBS = 10_000;
export const MAX_MANIFEST_HOSTS = 10_000;
/** At most this many errors are listed (then one line saying how many more); junk could produce thousands. */
export const MAX_MANIFEST_ERRORS = 100;
/**
 * Most dotted parts in one key or header. A manifest needs 3 (`jobs.hyper.lr`); smol-toml takes seconds and
 * builds a million-deep object for a 4 MiB `a.a.a…`, so such keys are refused before it starts.
 */
const MAX_KEY_PARTS = 8;
/** Deepest inline array / table nesting handed to smol-toml; a manifest needs 2. */
const MAX_TOML_DEPTH = 16;

const TOP_KEYS = ['placement', 'project', 'jobs', 'hosts'] as const;
const PLACEMENTS: readonly PlacementPolicy[] = ['binpack', 'spread'];

/** A manifest problem before its place is known; `related` names another entry whose line the message quotes. */
interface CrossIssue extends PendingIssue {
  related?: PathPart[];
}

function fileError(message: string, place?: Place | null): ManifestParseResult {
  return { ok: false, errors: [{ message, line: place?.line ?? null, col: place?.col ?? null, path: [] }] };
}

function placeAt(text: string, offset: number): Place {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, col: offset - lineStart + 1 };
}

/** smol-toml's first message line, without its "Invalid TOML document:" prefix. */
function tomlErrorText(error: TomlError): string {
  return (error.message.split('\n')[0] ?? '').replace(/^Invalid TOML document:\s*/, '');
}

/** Jobs read (checked field by field) between two turns of the event loop. */
const JOBS_PER_STEP = 1000;
const TOML_OPTIONS = { integersAsBigInt: 'asNeeded', maxDepth: MAX_TOML_DEPTH } as const;

/** Parses TOML within the limits, or says why the text is not a manifest at all; yields between long steps. */
function* readToml(text: string, fileName: string): Generator<void, { ok: true; doc: Table } | { ok: false; result: ManifestParseResult }> {
  const refuse = (message: string, place?: Place | null) => ({ ok: false as const, result: fileError(message, place) });
  if (typeof text !== 'string') return refuse(`${fileName} must be text`);
  if (text.length > MAX_MANIFEST_BYTES || utf8ByteLength(text, MAX_MANIFEST_BYTES) > MAX_MANIFEST_BYTES) {
    return refuse(`${fileName} is larger than 4 MiB; a manifest of ${MAX_MANIFEST_JOBS} jobs takes about 1 MiB — check that this is the right file`);
  }
  const nul = text.indexOf('\u0000');
  if (nul !== -1) {
    return refuse(`${fileName} contains a NUL byte, so it is a binary file (or UTF-16), not TOML text; pick the manifest itself, saved as UTF-8`, placeAt(text, nul));
  }
  const { tooDeep, splitPoints } = yield* scanTomlSteps(text, MAX_KEY_PARTS, new Set());
  if (tooDeep) return refuse(`${fileName}: a key here has more than ${MAX_KEY_PARTS} dotted parts; a manifest needs at most 3 (jobs.hyper.lr) — check for a runaway key`, tooDeep);
  yield;
  if (splitPoints && splitPoints.length > ENTRIES_PER_PIECE) {
    const doc = yield* parsePieces(text, splitPoints, TOML_OPTIONS);
    if (doc) return { ok: true, doc };
    yield;
  }
  try {
    return { ok: true, doc: parse(text, TOML_OPTIONS) as Table };
  } catch (error) {
    if (error instanceof TomlError) {
      const what = tomlErrorText(error);
      const hint = /nested/.test(what) ? `nothing in a manifest nests deeper than ${MAX_TOML_DEPTH} levels` : 'fix the TOML syntax here (docs/jobs.md shows the format)';
      return refuse(`${fileName} is not valid TOML: ${what}; ${hint}`, { line: error.line, col: error.column });
    }
    const why = error instanceof RangeError ? 'it is nested too deeply' : error instanceof Error ? error.message : String(error);
    return refuse(`${fileName} could not be read as TOML: ${why}`);
  }
}

function readPlacement(top: FieldReader): PlacementPolicy | undefined {
  const value = top.string('placement', null);
  if (value === undefined) return top.has('placement') ? undefined : 'binpack';
  if ((PLACEMENTS as readonly string[]).includes(value)) return value as PlacementPolicy;
  const guess = closest(value, PLACEMENTS);
  top.fail('placement', `placement must be "binpack" or "spread", got ${describeValue(value)}${guess ? ` (did you mean "${guess}"?)` : ''}`);
  return undefined;
}

/** `project = "…"`: a folder relative to the manifest's (checked and snapshotted when submitted, job-project.ts). */
function readProject(top: FieldReader): string | null | undefined {
  const value = top.string('project', null);
  if (value === undefined) return top.has('project') ? undefined : null;
  if (value.trim() === '') {
    top.fail('project', 'project is empty; give the project folder, relative to the manifest\'s folder (project = "." for the folder the manifest is in), or remove the key');
    return undefined;
  }
  return value;
}

/** The `[[jobs]]` or `[[hosts]]` list, or why not. */
function readList(doc: Table, key: 'jobs' | 'hosts', issues: IssueList): unknown[] | null {
  const value = Object.prototype.hasOwnProperty.call(doc, key) ? doc[key] : undefined;
  if (value === undefined) return null;
  if (Array.isArray(value)) return value;
  const header = `[[${key}]]`;
  issues.add([key], `${key} must be a list of ${header} tables, got ${describeValue(value)}; write ${header} (double brackets) above each entry`);
  return null;
}

/** Two entries with one name, or two entries that define the same job (same id); yields every JOBS_PER_STEP jobs. */
function* crossCheck(jobs: (JobSpec | null)[], hosts: (HostPolicy | null)[], issues: CrossIssue[]): Generator<void, void> {
  const byId = new Map<string, number>();
  const byName = new Map<string, number>();
  for (const [index, spec] of jobs.entries()) {
    if (index > 0 && index % JOBS_PER_STEP === 0) yield;
    if (!spec) continue;
    const id = jobId(spec);
    const sameJob = byId.get(id);
    const sameName = byName.get(spec.name);
    if (sameJob !== undefined) {
      issues.push({
        path: ['jobs', index],
        at: 'value',
        related: ['jobs', sameJob],
        message: `jobs[${index}] (${JSON.stringify(spec.name)}) defines the same job as %related%: same command, model, mode, hyper and seed, so the same id; remove one, or change its seed or hyper`,
      });
    } else if (sameName !== undefined) {
      issues.push({
        path: ['jobs', index, 'name'],
        at: 'value',
        related: ['jobs', sameName, 'name'],
        message: `job name ${JSON.stringify(spec.name)} is already used by %related%; job names must be unique — rename one`,
      });
    }
    if (!byId.has(id)) byId.set(id, index);
    if (!byName.has(spec.name)) byName.set(spec.name, index);
  }
  const hostNames = new Map<string, number>();
  hosts.forEach((host, index) => {
    if (!host) return;
    const first = hostNames.get(host.name);
    if (first === undefined) hostNames.set(host.name, index);
    else {
      issues.push({
        path: ['hosts', index, 'name'],
        at: 'value',
        related: ['hosts', first, 'name'],
        message: `[[hosts]] entry for ${JSON.stringify(host.name)} repeats %related%; merge them into one entry`,
      });
    }
  });
}

/** Places every issue (one more scan of the text), sorts them by line and keeps the first MAX_MANIFEST_ERRORS. */
function* locate(text: string, pending: CrossIssue[]): Generator<void, ManifestIssue[]> {
  const wanted = new Set<string>();
  for (const issue of pending) {
    for (const path of issue.related ? [issue.path, issue.related] : [issue.path]) {
      for (let length = 1; length <= path.length; length++) wanted.add(pathKey(path.slice(0, length)));
    }
  }
  const { places } = yield* scanTomlSteps(text, MAX_KEY_PARTS, wanted);
  const located = pending.map((issue): ManifestIssue => {
    const place = places.find(issue.path, issue.at);
    let message = issue.message;
    if (issue.related) {
      const other = places.find(issue.related, 'value');
      const name = `${issue.related[0]}[${issue.related[1]}]`;
      message = message.replace('%related%', other ? `${name} at line ${other.line}` : name);
    }
    return { message, line: place?.line ?? null, col: place?.col ?? null, path: issue.path };
  });
  located.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.col ?? 0) - (b.col ?? 0));
  if (located.length <= MAX_MANIFEST_ERRORS) return located;
  const more = located.length - MAX_MANIFEST_ERRORS;
  return [
    ...located.slice(0, MAX_MANIFEST_ERRORS),
    { message: `… and ${more} more error${more === 1 ? '' : 's'}; fix the ones above and submit again`, line: null, col: null, path: [] },
  ];
}

export function parseManifest(text: string, fileName: string): ManifestParseResult {
  const steps = parseManifestSteps(text, fileName);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** parseManifest as steps: each `yield` is a point where the caller may let the event loop turn (manifest-yielding.ts). */
export function* parseManifestSteps(text: string, fileName: string): Generator<void, ManifestParseResult> {
  const toml = yield* readToml(text, fileName);
  if (!toml.ok) return toml.result;
  const { doc } = toml;
  const issues = new IssueList();
  const top = new FieldReader(doc, [], issues);
  top.unknownKeys(TOP_KEYS, 'the manifest (top level)');
  const placement = readPlacement(top);
  const project = readProject(top);

  const rawJobs = readList(doc, 'jobs', issues);
  if (rawJobs !== null && rawJobs.length > MAX_MANIFEST_JOBS) {
    return fileError(`${fileName} has ${rawJobs.length} jobs; at most ${MAX_MANIFEST_JOBS} fit in one manifest — drop some points of the sweep`);
  }
  if (rawJobs?.length === 0 || (rawJobs === null && !top.has('jobs'))) {
    issues.add(['jobs'], `${fileName} has no [[jobs]]; add at least one job (docs/jobs.md has a full example)`);
  }
  const rawHosts = readList(doc, 'hosts', issues) ?? [];
  if (rawHosts.length > MAX_MANIFEST_HOSTS) {
    return fileError(`${fileName} has ${rawHosts.length} [[hosts]] entries; at most ${MAX_MANIFEST_HOSTS} are accepted`);
  }
  const jobs: (JobSpec | null)[] = [];
  for (const [index, value] of (rawJobs ?? []).entries()) {
    if (index > 0 && index % JOBS_PER_STEP === 0) yield;
    jobs.push(readJob(value, index, issues));
  }
  yield;
  const hosts = rawHosts.map((value, index) => readHost(value, index, issues));
  const pending: CrossIssue[] = [...issues.items];
  yield* crossCheck(jobs, hosts, pending);

  if (pending.length > 0 || placement === undefined || project === undefined) return { ok: false, errors: yield* locate(text, pending) };
  // The folder is checked when the manifest is submitted: its place is kept for those errors.
  const where = project === null ? null : (yield* scanTomlSteps(text, MAX_KEY_PARTS, new Set([pathKey(['project'])]))).places.find(['project'], 'value');
  const projectAt = project === null ? null : { path: project, line: where?.line ?? null, col: where?.col ?? null };
  return { ok: true, manifest: { jobs: jobs as JobSpec[], hosts: hosts as HostPolicy[], placement, project: projectAt } };
}
