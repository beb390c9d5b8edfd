/**
 * The wire between two members' blob server and fetcher (peer-blob-server.ts, peer-source.ts): length-prefixed
 * frames over TCP; a handshake in which each side proves it holds the snapshot's peer key (HMAC over both sides'
 * fresh nonces, so a proof cannot be replayed) before anything is served; then every frame sealed with AES-256-GCM
 * under keys derived from the peer key and the nonces, one per direction, with a counter nonce (a frame replayed,
 * reordered or altered fails to open and ends the connection). The key itself never travels between members: the
 * coordinator sends it to each over its own authenticated TLS session (docs/security.md).
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';

export const PEER_WIRE = {
  /** Bytes of a handshake frame (JSON) at most; a longer one ends the connection. */
  maxPlainFrame: 1024,
  /** Bytes of file data one sealed frame carries at most. */
  chunkBytes: 64 * 1024,
  /** A sealed frame at most (chunk, tag). */
  maxSealedFrame: 64 * 1024 + 16,
} as const;

const TAG_BYTES = 16;

export function peerKeyBytes(key: string): Buffer {
  return Buffer.from(key, 'base64url');
}

/** What one side shows to prove it holds the snapshot's key (hex). */
export function peerProof(key: Buffer, role: 'fetcher' | 'server', snapshot: string, fetcherNonce: string, serverNonce: string): string {
  return createHmac('sha256', key).update(`gpu-share peer ${role}\0${snapshot}\0${fetcherNonce}\0${serverNonce}`).digest('hex');
}

export function proofMatches(expected: string, given: unknown): boolean {
  if (typeof given !== 'string' || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(expected), Buffer.from(given));
}

/** The two sealing keys of one connection (fetcher→server, server→fetcher). */
export function sessionKeys(key: Buffer, fetcherNonce: string, serverNonce: string): { toServer: Buffer; toFetcher: Buffer } {
  const salt = Buffer.from(`${fetcherNonce}${serverNonce}`);
  const derive = (label: string) => Buffer.from(hkdfSync('sha256', key, salt, `gpu-share peer ${label}`, 32));
  return { toServer: derive('to-server'), toFetcher: derive('to-fetcher') };
}

/** Seals (or opens) one direction's frames in order: the nonce is the frame's number. */
export class FrameCipher {
  private counter = 0n;
  constructor(private readonly key: Buffer) {}

  private nextIv(): Buffer {
    const iv = Buffer.alloc(12);
    iv.writeBigUInt64BE(this.counter++, 4);
    return iv;
  }

  seal(plain: Buffer): Buffer {
    const cipher = createCipheriv('aes-256-gcm', this.key, this.nextIv());
    return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  }

  /** Throws when the frame was not sealed by the other side's key in this order. */
  open(sealed: Buffer): Buffer {
    if (sealed.length < TAG_BYTES) throw new Error('a sealed frame too short');
    const decipher = createDecipheriv('aes-256-gcm', this.key, this.nextIv());
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]);
  }
}

export function frame(payload: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(payload.length, 0);
  return Buffer.concat([head, payload]);
}

export function jsonFrame(value: unknown): Buffer {
  return frame(Buffer.from(JSON.stringify(value)));
}

/**
 * Frames as they arrive on a socket, read one at a time with a deadline. A frame over the current cap, or more
 * than `maxQueued` bytes the reader has not asked for, ends the connection (a peer cannot make it hold more).
 */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);
  private readonly frames: Buffer[] = [];
  private queuedBytes = 0;
  private waiter: { resolve: (b: Buffer) => void; reject: (e: Error) => void } | null = null;
  private ended: Error | null = null;
  /** The largest frame accepted now (handshake: small; after it, a sealed chunk). */
  maxFrame: number = PEER_WIRE.maxPlainFrame;

  constructor(
    private readonly socket: Socket,
    private readonly maxQueued = 4 * PEER_WIRE.maxSealedFrame,
  ) {
    socket.on('data', (chunk: Buffer) => this.push(chunk));
    socket.on('close', () => this.fail(new Error('the connection closed')));
    socket.on('error', (error) => this.fail(error));
  }

  private push(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 4) {
      const len = this.buffered.readUInt32BE(0);
      if (len > this.maxFrame) return this.fail(new Error(`a frame of ${len} bytes (at most ${this.maxFrame})`), true);
      if (this.buffered.length < 4 + len) break;
      const payload = this.buffered.subarray(4, 4 + len);
      this.buffered = this.buffered.subarray(4 + len);
      if (this.waiter) {
        const w = this.waiter;
        this.waiter = null;
        w.resolve(payload);
      } else {
        this.frames.push(payload);
        this.queuedBytes += payload.length;
      }
    }
    if (this.queuedBytes + this.buffered.length > this.maxQueued) this.socket.pause();
  }

  private fail(error: Error, destroy = false): void {
    this.ended ??= error;
    if (destroy) this.socket.destroy();
    const w = this.waiter;
    this.waiter = null;
    w?.reject(this.ended);
  }

  /** The next frame, or a rejection when the connection ends or `timeoutMs` passes without one. */
  next(timeoutMs: number): Promise<Buffer> {
    const queued = this.frames.shift();
    if (queued) {
      this.queuedBytes -= queued.length;
      if (this.queuedBytes + this.buffered.length <= this.maxQueued) this.socket.resume();
      return Promise.resolve(queued);
    }
    if (this.ended) return Promise.reject(this.ended);
    this.socket.resume();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        this.socket.destroy();
        reject(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      this.waiter = {
        resolve: (b) => (clearTimeout(timer), resolve(b)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
    });
  }

  async nextJson(timeoutMs: number, cipher?: FrameCipher): Promise<Record<string, unknown>> {
    const raw = await this.next(timeoutMs);
    const parsed: unknown = JSON.parse((cipher ? cipher.open(raw) : raw).toString('utf8'));
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('a frame that is not a JSON object');
    return parsed as Record<string, unknown>;
  }
}
