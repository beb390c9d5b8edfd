/**
 * Keeps the app's cluster.yaml on disk. Reads never touch the file; writes validate first, then replace the
 * file atomically (temp file in the same folder, fsync, rename) and keep the previous version as
 * cluster.yaml.bak, so a crash or power cut at any moment leaves either the old file or the new one.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import {
  MAX_CLUSTER_YAML_BYTES,
  formatIssue,
  parseClusterYaml,
  serializeClusterYaml,
  validateCluster,
} from '../../src-shared/cluster/index';
import type { ClusterConfig, ClusterIssue } from '../../src-shared/cluster/types';

export interface ClusterLoadResult {
  config: ClusterConfig | null;
  warnings: ClusterIssue[];
  errors: ClusterIssue[];
  /** Set when the file could not be read at all (its message is also the one error), as opposed to read and found invalid. */
  readFailure?: ClusterReadFailure;
}

/** Why a cluster file could not be read at all (as opposed to read and found invalid). */
export type ClusterReadFailure = { kind: 'missing' | 'directory' | 'unreadable' | 'too-large'; message: string };

function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

/**
 * Reads a cluster file as text, refusing anything over 1 MiB before reading it (a wrong pick could be a
 * disk image). Invalid UTF-8 is decoded to U+FFFD, which the parser then reports with its line and column.
 */
export async function readClusterText(filePath: string): Promise<{ ok: true; text: string } | { ok: false; failure: ClusterReadFailure }> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(filePath, 'r');
  } catch (error) {
    return { ok: false, failure: describeReadError(filePath, error) };
  }
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) return { ok: false, failure: describeReadError(filePath, { code: 'EISDIR' }) };
    if (stat.size > MAX_CLUSTER_YAML_BYTES) {
      return {
        ok: false,
        failure: {
          kind: 'too-large',
          message: `${filePath} is larger than 1 MiB (${stat.size} bytes); a cluster file is a few KB — check that this is the right file`,
        },
      };
    }
    const bytes = await handle.readFile();
    if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) {
      return { ok: false, failure: { kind: 'unreadable', message: `${filePath} is saved as UTF-16; save it as UTF-8 and try again` } };
    }
    return { ok: true, text: new TextDecoder('utf-8', { fatal: false, ignoreBOM: false }).decode(bytes) };
  } catch (error) {
    return { ok: false, failure: describeReadError(filePath, error) };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function describeReadError(filePath: string, error: unknown): ClusterReadFailure {
  switch (errnoCode(error)) {
    case 'ENOENT':
      return { kind: 'missing', message: `${filePath} does not exist; check the path, or start from assets/examples/cluster.yaml` };
    case 'EISDIR':
      return { kind: 'directory', message: `${filePath} is a folder, not a file; give the path of the cluster.yaml inside it` };
    case 'EACCES':
    case 'EPERM':
      return { kind: 'unreadable', message: `${filePath} cannot be read (permission denied); check the file's permissions` };
    default: {
      const why = error instanceof Error ? error.message : String(error);
      return { kind: 'unreadable', message: `${filePath} cannot be read (${why}); check that it is a readable file` };
    }
  }
}

function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === 'EPERM';
  }
}

export class ClusterStore {
  readonly path: string;
  /** Saves run one after another; two overlapping renames could otherwise leave the older config in place. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(filePath: string) {
    this.path = path.resolve(filePath);
  }

  /** Missing file → config null, no errors. Unreadable or invalid → config null with errors; the file is left as it is. */
  async load(): Promise<ClusterLoadResult> {
    const read = await readClusterText(this.path);
    if (!read.ok) {
      if (read.failure.kind === 'missing') return { config: null, warnings: [], errors: [] };
      return { config: null, warnings: [], errors: [{ severity: 'error', message: read.failure.message, path: [] }], readFailure: read.failure };
    }
    const parsed = parseClusterYaml(read.text);
    if (!parsed.ok) return { config: null, warnings: parsed.warnings, errors: parsed.errors };
    return { config: parsed.config, warnings: parsed.warnings, errors: [] };
  }

  /**
   * Writes `config` if it is valid; throws (listing every problem) without touching the file if not. The
   * text is parsed back before writing, so what lands on disk is known to load.
   */
  save(config: ClusterConfig): Promise<void> {
    const run = this.queue.then(() => this.write(config));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async write(config: ClusterConfig): Promise<void> {
    const problems = validateCluster(config);
    const text = serializeClusterYaml(config);
    if (problems.length === 0) {
      const reread = parseClusterYaml(text);
      if (!reread.ok) problems.push(...reread.errors);
    }
    if (problems.length > 0) {
      const list = problems.map((p) => `  ${formatIssue({ ...p, line: undefined, col: undefined }, path.basename(this.path))}`).join('\n');
      throw new Error(`Refusing to save ${this.path}: the cluster is invalid, so the file was left as it was:\n${list}`);
    }

    const target = await this.realTarget();
    const dir = path.dirname(target);
    await fs.mkdir(dir, { recursive: true });
    await this.removeStaleTemps(dir, path.basename(target));

    const previous = await fs.stat(target).catch(() => null);
    const mode = previous ? previous.mode & 0o777 : 0o644;
    const temp = path.join(dir, `${path.basename(target)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      const handle = await fs.open(temp, 'wx', mode);
      try {
        await handle.writeFile(text, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      if (previous) await this.keepBackup(target);
      await fs.rename(temp, target);
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
    await syncDir(dir);
  }

  /** Follows a symlinked cluster.yaml so the link stays a link and its target is what gets replaced. */
  private async realTarget(): Promise<string> {
    try {
      return await fs.realpath(this.path);
    } catch {
      return this.path;
    }
  }

  /**
   * Copies the current file to cluster.yaml.bak through its own temp file and rename: cluster.yaml itself is
   * never moved away, so there is no moment without one.
   */
  private async keepBackup(target: string): Promise<void> {
    const backup = `${target}.bak`;
    const temp = `${backup}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await fs.copyFile(target, temp);
      await fs.rename(temp, backup);
    } catch (error) {
      await fs.rm(temp, { force: true });
      if (errnoCode(error) !== 'ENOENT') throw error;
    }
  }

  /** Removes temp files left by a process that died mid-save (never those of a live one, which may still rename). */
  private async removeStaleTemps(dir: string, base: string): Promise<void> {
    const pattern = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:\\.bak)?\\.tmp-(\\d+)-[0-9a-f]+$`);
    const names = await fs.readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      const match = pattern.exec(name);
      if (match && Number(match[1]) !== process.pid && !isPidAlive(Number(match[1]))) {
        await fs.rm(path.join(dir, name), { force: true });
      }
    }
  }
}

/** Makes the rename itself durable; directories cannot be opened for this on Windows, where it is skipped. */
async function syncDir(dir: string): Promise<void> {
  let handle: fs.FileHandle | null = null;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Not supported on this platform or file system; the rename is still atomic.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
