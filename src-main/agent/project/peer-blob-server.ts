/**
 * The agent's project blob server: another member fetches a snapshot's files from this one instead of the
 * coordinator (issue 23, item 2). It serves only snapshots this agent was told to prepare (it holds their peer
 * key), only to a fetcher that proves it holds that key (peer-wire.ts), only files of that snapshot's manifest
 * that are in its verified cache, and every byte sealed. A stranger gets a nonce and a closed socket; what any
 * connection can make it hold is bounded: sockets in all and per address, streams at once, a deadline for the
 * handshake and for each request, frame sizes.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { SHA256_HEX_PATTERN, snapshotManifestSchema } from '../../../src-shared/projects/project-protocol';
import { FrameCipher, FrameReader, PEER_WIRE, frame, jsonFrame, peerKeyBytes, peerProof, proofMatches, sessionKeys } from './peer-wire';
import type { SnapshotStore } from './snapshot-store';

export interface PeerBlobServerOptions {
  store: () => SnapshotStore;
  log: (line: string) => void;
  /** Sockets open at once, from everyone (default 32). */
  maxSockets?: number;
  /** Sockets open at once from one address (default 6). */
  perAddress?: number;
  /** Files streaming at once (default 8); a request past it is answered "busy" (the fetcher asks elsewhere). */
  maxStreams?: number;
  /** The handshake must be done within this (default 5 s). */
  handshakeMs?: number;
  /** A connection with no request for this long is closed (default 20 s). */
  idleMs?: number;
}

/** Snapshot keys held at most (the newest kept). */
const MAX_KEYS = 64;
const NONCE_PATTERN = /^[0-9a-f]{32}$/;
const REFUSAL_LOG_MS = 60_000;

export class PeerBlobServer {
  private readonly server: Server;
  private readonly keys = new Map<string, Buffer>();
  private readonly blobsOf = new Map<string, Set<string>>();
  private readonly sockets = new Set<Socket>();
  private readonly perAddress = new Map<string, number>();
  private streams = 0;
  private lastRefusalLog = -Infinity;
  /** What it has done, for the log and tests. */
  readonly counters = { files: 0, bytes: 0, refused: 0, busy: 0 };
  private readonly o: Required<Omit<PeerBlobServerOptions, 'store' | 'log'>>;

  constructor(private readonly opts: PeerBlobServerOptions) {
    this.o = { maxSockets: opts.maxSockets ?? 32, perAddress: opts.perAddress ?? 6, maxStreams: opts.maxStreams ?? 8, handshakeMs: opts.handshakeMs ?? 5000, idleMs: opts.idleMs ?? 20_000 };
    this.server = createServer((socket) => this.accept(socket));
  }

  /** Listens on every interface (members reach it where training reaches them); resolves with the port. */
  listen(port = 0, host?: string): Promise<number> {
    return new Promise((resolve, reject) => {
      // Closed before it was listening (the agent stopped while starting): Node never says "listening" then.
      const closed = () => reject(new Error('the blob server was closed before it listened'));
      this.server.once('error', reject);
      this.server.once('close', closed);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        this.server.off('close', closed);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /**
   * This agent was told to prepare `snapshot` (or to serve it): it may serve the files it holds of it to those who
   * prove `key` — those of its manifest, or only `blobs` (the files it shares with another snapshot held here).
   */
  allow(snapshot: string, key: string, blobs?: readonly string[]): void {
    this.keys.delete(snapshot);
    this.keys.set(snapshot, peerKeyBytes(key));
    while (this.keys.size > MAX_KEYS) this.keys.delete(this.keys.keys().next().value!);
    this.blobsOf.delete(snapshot); // read again from its manifest at the next request, unless:
    if (blobs) this.blobsOf.set(snapshot, new Set(blobs));
    while (this.blobsOf.size > MAX_KEYS) this.blobsOf.delete(this.blobsOf.keys().next().value!);
  }

  /** Whether it holds a key for `snapshot` (it serves it to those who prove it). */
  serves(snapshot: string): boolean {
    return this.keys.has(snapshot);
  }

  private accept(socket: Socket): void {
    const address = (socket.remoteAddress ?? '?').replace(/^::ffff:/, '');
    const fromHere = this.perAddress.get(address) ?? 0;
    if (this.sockets.size >= this.o.maxSockets || fromHere >= this.o.perAddress) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    this.perAddress.set(address, fromHere + 1);
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.sockets.delete(socket);
      const n = (this.perAddress.get(address) ?? 1) - 1;
      if (n <= 0) this.perAddress.delete(address);
      else this.perAddress.set(address, n);
    });
    void this.serve(socket, address).catch(() => socket.destroy());
  }

  private refuse(socket: Socket, address: string, why: string): void {
    this.counters.refused++;
    socket.end(jsonFrame({ error: why }));
    const now = Date.now();
    if (now - this.lastRefusalLog < REFUSAL_LOG_MS) return;
    this.lastRefusalLog = now;
    this.opts.log(`project blob server: refused ${address}: ${why} (one such line a minute at most)`);
  }

  private async serve(socket: Socket, address: string): Promise<void> {
    const reader = new FrameReader(socket);
    const hello = await reader.nextJson(this.o.handshakeMs);
    const snapshot = typeof hello.snapshot === 'string' && SHA256_HEX_PATTERN.test(hello.snapshot) ? hello.snapshot : null;
    const fetcherNonce = typeof hello.nonce === 'string' && NONCE_PATTERN.test(hello.nonce) ? hello.nonce : null;
    const key = snapshot ? this.keys.get(snapshot) : undefined;
    if (!snapshot || !fetcherNonce || !key) return this.refuse(socket, address, 'no such snapshot served here');
    const serverNonce = randomBytes(16).toString('hex');
    socket.write(jsonFrame({ nonce: serverNonce }));
    const shown = await reader.nextJson(this.o.handshakeMs);
    if (!proofMatches(peerProof(key, 'fetcher', snapshot, fetcherNonce, serverNonce), shown.proof)) {
      return this.refuse(socket, address, 'no proof of the snapshot key (not a member told to prepare it)');
    }
    socket.write(jsonFrame({ proof: peerProof(key, 'server', snapshot, fetcherNonce, serverNonce) }));
    const keys = sessionKeys(key, fetcherNonce, serverNonce);
    const fromFetcher = new FrameCipher(keys.toServer);
    const toFetcher = new FrameCipher(keys.toFetcher);
    reader.maxFrame = PEER_WIRE.maxPlainFrame + 16;
    for (;;) {
      const ask = await reader.nextJson(this.o.idleMs, fromFetcher);
      const sha = typeof ask.sha256 === 'string' && SHA256_HEX_PATTERN.test(ask.sha256) ? ask.sha256 : null;
      const file = sha && this.holds(snapshot, sha) ? this.opts.store().cache.blobPath(sha) : null;
      let size = -1;
      try {
        if (file) size = statSync(file).size;
      } catch {
        size = -1;
      }
      if (size < 0) {
        socket.write(frame(toFetcher.seal(Buffer.from(JSON.stringify({ ok: false, why: 'not here' })))));
        continue;
      }
      if (this.streams >= this.o.maxStreams) {
        this.counters.busy++;
        socket.write(frame(toFetcher.seal(Buffer.from(JSON.stringify({ ok: false, why: 'busy' })))));
        continue;
      }
      this.streams++;
      try {
        await this.stream(socket, file!, size, toFetcher);
      } finally {
        this.streams--;
      }
    }
  }

  private async stream(socket: Socket, file: string, size: number, cipher: FrameCipher): Promise<void> {
    socket.write(frame(cipher.seal(Buffer.from(JSON.stringify({ ok: true, size })))));
    let sent = 0;
    const input = size === 0 ? [] : createReadStream(file, { highWaterMark: PEER_WIRE.chunkBytes, end: size - 1 });
    try {
      for await (const chunk of input as AsyncIterable<Buffer>) {
        if (socket.destroyed) break;
        sent += chunk.length;
        if (!socket.write(frame(cipher.seal(chunk)))) await new Promise<void>((resolve) => { socket.once('drain', resolve); socket.once('close', resolve); });
      }
    } finally {
      if (!Array.isArray(input)) input.destroy();
    }
    if (sent !== size) throw new Error(`blob changed while served (${sent} of ${size} bytes)`);
    this.counters.files++;
    this.counters.bytes += size;
  }

  /** Whether `sha` is a file of `snapshot` (its manifest, kept since the agent fetched it, or the shared files it was told) and in the cache. */
  private holds(snapshot: string, sha: string): boolean {
    let set = this.blobsOf.get(snapshot);
    if (!set) {
      const store = this.opts.store();
      try {
        const manifest = snapshotManifestSchema.parse(JSON.parse(readFileSync(path.join(store.layout.manifests, `${snapshot}.json`), 'utf8')));
        set = new Set(manifest.entries.flatMap((e) => (e.kind === 'file' ? [e.sha256] : [])));
      } catch {
        return false;
      }
      this.blobsOf.set(snapshot, set);
      while (this.blobsOf.size > MAX_KEYS) this.blobsOf.delete(this.blobsOf.keys().next().value!);
    }
    return set.has(sha) && this.opts.store().cache.has(sha);
  }
}
