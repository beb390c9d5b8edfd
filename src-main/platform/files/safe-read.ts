/**
 * Reads a file a person pointed at, which may be anything: a FIFO that blocks `open` and `read` for ever,
 * /dev/zero that never ends, a folder, a socket, or a regular file that grows while it is read. Only regular
 * files are read; the kind is checked on the opened descriptor (so a swap after a path check changes
 * nothing), and reading stops one byte past the limit whatever the file claims its size is.
 */
import { constants, promises as fs, type Stats } from 'node:fs';
import { errnoCode } from './errno';

/** Why a file was not read; `message` names the path and says what to do. */
export type FileReadFailure = {
  kind: 'missing' | 'directory' | 'not-regular' | 'unreadable' | 'too-large';
  message: string;
};

export type FileReadResult = { ok: true; bytes: Buffer; stat: Stats } | { ok: false; failure: FileReadFailure };

export interface SafeReadOptions {
  /** Most bytes accepted; one more makes the read fail as too large. */
  maxBytes: number;
  /** How the limit reads in messages, e.g. "1 MiB". */
  limitText: string;
  /** What the file should be, for messages: "a cluster file is a few KB". */
  expectation: string;
}

// O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one for ever. Not defined on Windows,
// where there are no FIFOs to open this way.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const CHUNK = 64 * 1024;


/** What a non-regular file is, in words: "a named pipe (FIFO)", "a character device"… */
export function describeFileKind(stat: Stats): string {
  if (stat.isDirectory()) return 'a folder';
  if (stat.isFIFO()) return 'a named pipe (FIFO)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

function notRegular(filePath: string, stat: Stats): FileReadFailure {
  if (stat.isDirectory()) {
    return { kind: 'directory', message: `${filePath} is a folder, not a file; give the path of the cluster.yaml inside it` };
  }
  return {
    kind: 'not-regular',
    message: `${filePath} is ${describeFileKind(stat)}, not a regular file, so it was not read; give the path of a cluster.yaml file`,
  };
}

export function describeReadError(filePath: string, error: unknown): FileReadFailure {
  switch (errnoCode(error)) {
    case 'ENOENT':
      return { kind: 'missing', message: `${filePath} does not exist; check the path, or start from assets/examples/cluster.yaml` };
    case 'EISDIR':
      return { kind: 'directory', message: `${filePath} is a folder, not a file; give the path of the cluster.yaml inside it` };
    case 'ENXIO':
      // open() of a Unix socket (or a FIFO opened for writing without a reader) fails this way on Linux.
      return { kind: 'not-regular', message: `${filePath} is a socket or device, not a regular file, so it was not read; give the path of a cluster.yaml file` };
    case 'EACCES':
    case 'EPERM':
      return { kind: 'unreadable', message: `${filePath} cannot be read (permission denied); check the file's permissions` };
    default: {
      const why = error instanceof Error ? error.message : String(error);
      return { kind: 'unreadable', message: `${filePath} cannot be read (${why}); check that it is a readable file` };
    }
  }
}

function tooLarge(filePath: string, size: string, opts: SafeReadOptions): FileReadFailure {
  return {
    kind: 'too-large',
    message: `${filePath} is larger than ${opts.limitText} (${size}); ${opts.expectation} — check that this is the right file`,
  };
}

/**
 * Reads a regular file of at most `maxBytes`. Never blocks on a FIFO or device and never holds more than
 * `maxBytes + 1` bytes, whatever the file is or claims to be.
 */
export async function readRegularFile(filePath: string, opts: SafeReadOptions): Promise<FileReadResult> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(filePath, OPEN_FLAGS);
  } catch (error) {
    return { ok: false, failure: describeReadError(filePath, error) };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { ok: false, failure: notRegular(filePath, stat) };
    // The size is only a claim (a file may grow, /proc files say 0), so it refuses early but never bounds the read.
    if (stat.size > opts.maxBytes) return { ok: false, failure: tooLarge(filePath, `${stat.size} bytes`, opts) };
    // Read up to one byte past the limit, growing the buffer as the file turns out longer than it said.
    const cap = opts.maxBytes + 1;
    let buffer = Buffer.alloc(Math.min(cap, Math.max(stat.size + 1, CHUNK)));
    let filled = 0;
    for (;;) {
      if (filled === buffer.length) {
        if (buffer.length === cap) break;
        const grown = Buffer.alloc(Math.min(cap, buffer.length * 2));
        buffer.copy(grown, 0, 0, filled);
        buffer = grown;
      }
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, null);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > opts.maxBytes) return { ok: false, failure: tooLarge(filePath, `more than ${opts.maxBytes} bytes`, opts) };
    return { ok: true, bytes: buffer.subarray(0, filled), stat };
  } catch (error) {
    return { ok: false, failure: describeReadError(filePath, error) };
  } finally {
    await handle.close().catch(() => undefined);
  }
}
