/**
 * Keeps a pty's last output. Two things cut it off on Linux once the child has exited while the reader was behind
 * (an agent slowed by load, a trainer printing a burst right before it exits):
 * - libuv takes a short read plus the pty's hangup for the end of the stream, but a pty master hands out at most
 *   its line discipline's buffer (4 KiB) a read while the kernel may hold far more: the stream ends early;
 * - node-pty waits only 200 ms after the exit for the stream to end, then destroys it (microsoft/node-pty#72).
 * Either way the rest was dropped and the run "finished" without its last lines. So at either moment, everything
 * still in the pty is read at once (to its EIO) and handed on through the stream as ordinary output.
 */
import { readSync } from 'node:fs';
import type { Readable } from 'node:stream';

/** The most read at that moment: far past what a pty buffers, a bound against a writer that never stops. */
export const MAX_TAIL_BYTES = 16 * 1024 * 1024;

/** node-pty's UnixTerminal internals this relies on (absent on Windows, which flushes on its own). */
interface UnixTerminalInternals {
  _socket?: Readable;
  _fd?: number;
}

/** Everything the (non-blocking) pty master holds now: stops at EAGAIN (nothing yet), EIO (the pty's end) or the bound. */
export function readRemaining(fd: number, maxBytes = MAX_TAIL_BYTES): Buffer[] {
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(64 * 1024);
  let total = 0;
  while (total < maxBytes) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch {
      break; // EAGAIN: a lingering process holds the pty but wrote nothing more; EIO: all of it is read
    }
    if (n <= 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
    total += n;
  }
  return chunks;
}

/**
 * Makes `terminal`'s read stream read the pty to its end before it ends (libuv's early EOF) or is destroyed
 * (node-pty's exit timeout); the stream decodes that as data, before node-pty reports the exit. A destroy for an
 * error passes straight through. Returns false where the terminal lacks the internals (another node-pty, Windows).
 */
export function keepPtyTail(terminal: object): boolean {
  const { _socket: socket, _fd: fd } = terminal as UnixTerminalInternals;
  if (!socket || typeof fd !== 'number' || typeof socket.destroy !== 'function' || typeof socket.push !== 'function') return false;
  const push = socket.push.bind(socket);
  const destroy = socket.destroy.bind(socket);
  let drained = false;
  const drain = (): void => {
    drained = true;
    for (const chunk of readRemaining(fd)) push(chunk);
  };
  socket.push = (chunk: unknown, encoding?: BufferEncoding) => {
    if (chunk === null && !drained && !socket.destroyed) drain();
    return push(chunk, encoding);
  };
  socket.destroy = (error?: Error) => {
    // An error, or a stream already at its end (read to the pty's end above): nothing is left to save.
    if (error || drained || socket.destroyed || !socket.readable || socket.readableEnded) return destroy(error);
    drain();
    // push() may queue what it decoded for the next tick: destroy after that, or the queue is dropped.
    setImmediate(() => destroy());
    return socket;
  };
  return true;
}
