/**
 * One member's blob server as seen by a fetcher (peer-wire.ts): a few connections kept open and reused, each
 * proving the snapshot key before it asks for anything and checking the server's proof back; a file's bytes are
 * hashed as they arrive and written only to the temporary file the cache adopts after they match. Answers
 * "not here" and "busy" are not failures (the fetcher asks the next source); anything else is.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import type { ProjectPeer } from '../../../src-shared/projects/peer-sources';
import { FrameCipher, FrameReader, PEER_WIRE, frame, jsonFrame, peerKeyBytes, peerProof, proofMatches, sessionKeys } from './peer-wire';

export type PeerFetchResult =
  | { kind: 'ok'; bytes: number }
  /** The peer does not hold it (yet) or is busy: ask the next source. */
  | { kind: 'elsewhere'; why: string }
  | { kind: 'mismatch'; why: string }
  | { kind: 'failed'; why: string };

export interface PeerClientOptions {
  peer: ProjectPeer;
  snapshot: string;
  key: string;
  /** Silence that ends a connection (a stalled or very slow peer: the fetcher falls back). */
  idleMs: number;
  /** Connections kept to this peer at most. */
  maxConnections: number;
}

interface Connection {
  socket: Socket;
  reader: FrameReader;
  send: FrameCipher;
  receive: FrameCipher;
}

export class PeerClient {
  private readonly idle: Connection[] = [];
  private open = 0;

  constructor(private readonly opts: PeerClientOptions) {}

  /** Whether a connection can be had now without going over the bound. */
  get available(): boolean {
    return this.idle.length > 0 || this.open < this.opts.maxConnections;
  }

  private async connect(): Promise<Connection> {
    const { peer } = this.opts;
    const key = peerKeyBytes(this.opts.key);
    const socket = connect({ host: peer.host, port: peer.port });
    socket.setNoDelay(true);
    this.open++;
    socket.once('close', () => this.open--);
    const reader = new FrameReader(socket, 64 * PEER_WIRE.maxSealedFrame);
    try {
      return await this.handshake(socket, reader, key);
    } catch (error) {
      socket.destroy();
      throw error;
    }
  }

  private async handshake(socket: Socket, reader: FrameReader, key: Buffer): Promise<Connection> {
    const { snapshot, idleMs } = this.opts;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => (socket.destroy(), reject(new Error(`no connection within ${idleMs / 1000} s`))), idleMs);
      socket.once('connect', () => (clearTimeout(timer), resolve()));
      socket.once('error', (e) => (clearTimeout(timer), reject(e)));
    });
    const fetcherNonce = randomBytes(16).toString('hex');
    socket.write(jsonFrame({ snapshot, nonce: fetcherNonce }));
    const hello = await reader.nextJson(idleMs);
    if (typeof hello.nonce !== 'string') throw new Error(`refused: ${typeof hello.error === 'string' ? hello.error : 'no nonce'}`);
    socket.write(jsonFrame({ proof: peerProof(key, 'fetcher', snapshot, fetcherNonce, hello.nonce) }));
    const back = await reader.nextJson(idleMs);
    if (!proofMatches(peerProof(key, 'server', snapshot, fetcherNonce, hello.nonce), back.proof)) {
      socket.destroy();
      throw new Error(typeof back.error === 'string' ? `refused: ${back.error}` : 'it did not prove it holds the snapshot key');
    }
    reader.maxFrame = PEER_WIRE.maxSealedFrame;
    const keys = sessionKeys(key, fetcherNonce, hello.nonce);
    return { socket, reader, send: new FrameCipher(keys.toServer), receive: new FrameCipher(keys.toFetcher) };
  }

  /** Blob `sha256` (`size` bytes) into `toFile`, checked as it streams; never throws. */
  async fetch(sha256: string, size: number, toFile: string, onBytes: (received: number) => void): Promise<PeerFetchResult> {
    let conn: Connection | undefined;
    try {
      conn = this.idle.pop() ?? (await this.connect());
    } catch (error) {
      return { kind: 'failed', why: `could not reach it: ${error instanceof Error ? error.message : String(error)}` };
    }
    let fd: number | null = null;
    try {
      conn.socket.write(frame(conn.send.seal(Buffer.from(JSON.stringify({ sha256 })))));
      const head = await conn.reader.nextJson(this.opts.idleMs, conn.receive);
      if (head.ok !== true) {
        this.idle.push(conn);
        return { kind: 'elsewhere', why: typeof head.why === 'string' ? head.why.slice(0, 100) : 'refused' };
      }
      if (head.size !== size) {
        conn.socket.destroy();
        return { kind: 'mismatch', why: `it holds ${String(head.size)} bytes, not ${size}` };
      }
      const hash = createHash('sha256');
      fd = openSync(toFile, 'w');
      let received = 0;
      while (received < size) {
        const chunk = conn.receive.open(await conn.reader.next(this.opts.idleMs));
        if (chunk.length === 0 || received + chunk.length > size) throw new Error('more bytes than the file has');
        hash.update(chunk);
        writeSync(fd, chunk);
        received += chunk.length;
        onBytes(received);
      }
      closeSync(fd);
      fd = null;
      const got = hash.digest('hex');
      if (got !== sha256) {
        rmSync(toFile, { force: true });
        conn.socket.destroy();
        return { kind: 'mismatch', why: `its bytes hash to ${got.slice(0, 12)}…` };
      }
      this.idle.push(conn);
      return { kind: 'ok', bytes: size };
    } catch (error) {
      conn.socket.destroy();
      if (fd !== null) closeSync(fd);
      rmSync(toFile, { force: true });
      return { kind: 'failed', why: error instanceof Error ? error.message : String(error) };
    }
  }

  close(): void {
    for (const c of this.idle.splice(0)) c.socket.destroy();
  }
}
