/**
 * Keeps the app's cluster.yaml on disk. Reading takes only regular files up to 1 MiB (a FIFO or device is
 * refused at once). Every write holds a cross-process lock, re-reads the file under it, validates, keeps the
 * person's comments, key order and unknown keys (only changed nodes are rewritten), refuses a read-only
 * file, and replaces the file atomically keeping the previous version as cluster.yaml.bak. `save` refuses
 * when the file changed since this store read it; `update` re-applies its change to what is there now, so
 * two writers at once both land.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { MAX_CLUSTER_YAML_BYTES, formatIssue, parseClusterYaml, validateCluster } from '../../src-shared/cluster/index';
import { rewriteClusterText } from '../../src-shared/cluster/rewrite';
import type { ClusterConfig, ClusterIssue } from '../../src-shared/cluster/types';
import { assertWritable, realTarget, replaceFileAtomically } from '../platform/files/atomic-replace';
import { withFileLock } from '../platform/files/file-lock';
import { readRegularFile, type FileReadFailure } from '../platform/files/safe-read';

export interface ClusterLoadResult {
  config: ClusterConfig | null;
  warnings: ClusterIssue[];
  errors: ClusterIssue[];
  /** Set when the file could not be read at all (its message is also the one error), as opposed to read and found invalid. */
  readFailure?: ClusterReadFailure;
}

/** Why a cluster file could not be read at all (as opposed to read and found invalid). */
export type ClusterReadFailure = FileReadFailure;

type ClusterRead = { ok: true; text: string; fingerprint: string } | { ok: false; failure: ClusterReadFailure; fingerprint: string };

/** The file changed on disk (another GPU Share, `gpu-share add-this-machine`, an editor) since this store read it. */
export class ClusterChangedError extends Error {
  constructor(readonly filePath: string) {
    super(
      `${filePath} was changed by another program since GPU Share read it, so it was not overwritten (that would lose the other change); load the file again and retry`,
    );
    this.name = 'ClusterChangedError';
  }
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

async function readCluster(filePath: string): Promise<ClusterRead> {
  const read = await readRegularFile(filePath, {
    maxBytes: MAX_CLUSTER_YAML_BYTES,
    limitText: '1 MiB',
    expectation: 'a cluster file is a few KB',
  });
  if (!read.ok) return { ok: false, failure: read.failure, fingerprint: read.failure.kind === 'missing' ? 'missing' : `unreadable:${read.failure.message}` };
  const bytes = read.bytes;
  const fingerprint = sha256(bytes);
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) {
    return { ok: false, failure: { kind: 'unreadable', message: `${filePath} is saved as UTF-16; save it as UTF-8 and try again` }, fingerprint };
  }
  // Invalid UTF-8 becomes U+FFFD, which the parser then reports with its line and column.
  return { ok: true, text: new TextDecoder('utf-8', { fatal: false, ignoreBOM: false }).decode(bytes), fingerprint };
}

/**
 * Reads a cluster file as text: only a regular file, refused past 1 MiB whatever it claims (a wrong pick could
 * be a disk image, a FIFO or /dev/zero), never blocking.
 */
export async function readClusterText(filePath: string): Promise<{ ok: true; text: string } | { ok: false; failure: ClusterReadFailure }> {
  const read = await readCluster(filePath);
  return read.ok ? { ok: true, text: read.text } : { ok: false, failure: read.failure };
}

export class ClusterStore {
  readonly path: string;
  /** Saves run one after another; two overlapping renames could otherwise leave the older config in place. */
  private queue: Promise<unknown> = Promise.resolve();
  /** The file as this store last read or wrote it; undefined until it has looked at the file. */
  private seen: string | undefined;

  constructor(filePath: string) {
    this.path = path.resolve(filePath);
  }

  /** Missing file → config null, no errors. Unreadable or invalid → config null with errors; the file is left as it is. */
  async load(): Promise<ClusterLoadResult> {
    const read = await readCluster(this.path);
    this.seen = read.fingerprint;
    if (!read.ok) {
      if (read.failure.kind === 'missing') return { config: null, warnings: [], errors: [] };
      return { config: null, warnings: [], errors: [{ severity: 'error', message: read.failure.message, path: [] }], readFailure: read.failure };
    }
    const parsed = parseClusterYaml(read.text);
    if (!parsed.ok) return { config: null, warnings: parsed.warnings, errors: parsed.errors };
    return { config: parsed.config, warnings: parsed.warnings, errors: [] };
  }

  /**
   * Writes `config` if it is valid; throws (listing every problem) without touching the file if not, and
   * throws ClusterChangedError if the file changed since this store last read it. Only the nodes that
   * differ are rewritten; `sourceText` (a file the person chose to replace this one with, already known to
   * read as `config`) is written as it is.
   */
  save(config: ClusterConfig, opts: { sourceText?: string } = {}): Promise<void> {
    return this.serially(async () => {
      this.assertValid(config);
      await this.locked(async (target, current) => {
        if (this.seen !== undefined && current.fingerprint !== this.seen) throw new ClusterChangedError(this.path);
        await this.write(target, current, config, opts.sourceText);
      });
    });
  }

  /**
   * Applies `change` to the cluster as it is on disk now, under the lock, and writes the result: a change
   * made meanwhile by another process is kept. Throws when the file on disk is unreadable or invalid.
   */
  update(change: (current: ClusterConfig | null) => ClusterConfig): Promise<ClusterConfig> {
    return this.serially(() =>
      this.locked(async (target, current) => {
        let config: ClusterConfig | null = null;
        if (current.ok) {
          const parsed = parseClusterYaml(current.text);
          if (!parsed.ok) {
            const list = parsed.errors.map((e) => `  ${formatIssue(e, path.basename(this.path))}`).join('\n');
            throw new Error(`${this.path} is not a valid cluster now, so it was left as it was:\n${list}`);
          }
          config = parsed.config;
        } else if (current.failure.kind !== 'missing') throw new Error(current.failure.message);
        const next = change(config);
        this.assertValid(next);
        await this.write(target, current, next);
        return next;
      }),
    );
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Holds the lock beside the real file (a symlinked cluster.yaml stays a link) and reads the file under it. */
  private async locked<T>(fn: (target: string, current: ClusterRead) => Promise<T>): Promise<T> {
    const target = await realTarget(this.path);
    await fs.mkdir(path.dirname(target), { recursive: true });
    return withFileLock(target, async () => fn(target, await readCluster(target)));
  }

  /** The text is parsed back before writing, so what lands on disk is known to load. */
  private assertValid(config: ClusterConfig): void {
    const problems = validateCluster(config);
    if (problems.length > 0) throw this.refusal(problems);
  }

  private refusal(problems: ClusterIssue[]): Error {
    const list = problems.map((p) => `  ${formatIssue({ ...p, line: undefined, col: undefined }, path.basename(this.path))}`).join('\n');
    return new Error(`Refusing to save ${this.path}: the cluster is invalid, so the file was left as it was:\n${list}`);
  }

  private async write(target: string, current: ClusterRead, config: ClusterConfig, sourceText?: string): Promise<void> {
    if (!current.ok && (current.failure.kind === 'directory' || current.failure.kind === 'not-regular')) {
      throw new Error(`${current.failure.message}; it was not replaced`);
    }
    const text = sourceText ?? rewriteClusterText(current.ok ? current.text : null, config).text;
    const reread = parseClusterYaml(text);
    if (!reread.ok) throw this.refusal(reread.errors);
    await assertWritable(target);
    await replaceFileAtomically(target, text, { keepBackup: true });
    this.seen = sha256(Buffer.from(text, 'utf8'));
  }
}
