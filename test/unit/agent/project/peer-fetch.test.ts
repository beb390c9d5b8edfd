// A member's blob server and a fetcher over real loopback sockets: a member with the snapshot's key gets a file
// from the peer (sealed, checked), one the peer lacks or holds corrupt comes from the coordinator, a wrong key or
// a stranger is refused with nothing served, and a stranger cannot hold more sockets than the bound.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { connect, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SnapshotManifest } from '../../../../src-shared/projects/project-protocol';
import { PeerBlobServer } from '../../../../src-main/agent/project/peer-blob-server';
import { peerSource } from '../../../../src-main/agent/project/peer-source';
import { FrameReader, jsonFrame } from '../../../../src-main/agent/project/peer-wire';
import type { ProjectSource } from '../../../../src-main/agent/project/project-source';
import { SnapshotStore } from '../../../../src-main/agent/project/snapshot-store';
import { manifestHash } from '../../../../src-main/platform/projects/manifest-hash';

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const key = randomBytes(32).toString('base64url');

let root: string;
let store: SnapshotStore;
let server: PeerBlobServer;
let port: number;
let snapshot: string;
const files = { held: randomBytes(300_000), lacked: randomBytes(1000), empty: Buffer.alloc(0) };
const logs: string[] = [];

/** The coordinator as a source: serves every file, counting what it served. */
function coordinator(): ProjectSource & { served: string[] } {
  const all = new Map(Object.values(files).map((b) => [sha(b), b]));
  const served: string[] = [];
  return {
    name: 'the coordinator',
    served,
    manifest: () => Promise.resolve({ ok: false, why: 'not in this test' }),
    blob: (_s, sha256, _size, toFile) => {
      served.push(sha256);
      fs.writeFileSync(toFile, all.get(sha256)!);
      return Promise.resolve({ kind: 'ok', bytes: all.get(sha256)!.length });
    },
  };
}

const fetchInto = async (source: ProjectSource, b: Buffer): Promise<Buffer> => {
  const to = path.join(root, `got-${randomBytes(4).toString('hex')}`);
  const result = await source.blob(snapshot, sha(b), b.length, to, () => undefined);
  expect(result.kind).toBe('ok');
  return fs.readFileSync(to);
};

beforeEach(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'peer-fetch-'));
  store = new SnapshotStore(path.join(root, 'peer'), 1 << 30, (l) => logs.push(l));
  const manifest: SnapshotManifest = {
    version: 1,
    entries: Object.entries(files).map(([name, b]) => ({ kind: 'file' as const, path: `${name}.bin`, sha256: sha(b), size: b.length, executable: false })),
  };
  snapshot = manifestHash(manifest);
  fs.writeFileSync(path.join(store.layout.manifests, `${snapshot}.json`), JSON.stringify(manifest));
  for (const b of [files.held, files.empty]) {
    const tmp = store.cache.tempPath();
    fs.writeFileSync(tmp, b);
    store.cache.adopt(tmp, sha(b));
  }
  server = new PeerBlobServer({ store: () => store, log: (l) => logs.push(l), perAddress: 3, handshakeMs: 2000 });
  port = await server.listen(0, '127.0.0.1');
  server.allow(snapshot, key);
});

afterEach(async () => {
  await server.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const peers = () => [{ workerId: 2, node: 'beta', host: '127.0.0.1', port }];

describe('peer fetching', () => {
  it('fetches a file the peer holds from the peer, sealed and checked, and one it lacks from the coordinator', async () => {
    const coord = coordinator();
    const source = peerSource({ coordinator: coord, snapshot, peers: peers(), key, log: (l) => logs.push(l) });
    expect((await fetchInto(source, files.held)).equals(files.held)).toBe(true);
    expect((await fetchInto(source, files.empty)).length).toBe(0);
    expect((await fetchInto(source, files.lacked)).equals(files.lacked)).toBe(true);
    expect(coord.served).toEqual([sha(files.lacked)]);
    expect(source.counts).toEqual({ peers: files.held.length, coordinator: files.lacked.length });
    // The server counts a file once its send went through, which can be just after the fetcher has it.
    await expect.poll(() => server.counters.files).toBe(2);
    expect(server.counters.bytes).toBe(files.held.length);
    expect(source.summary()).toMatch(/^beta 293 KiB, the coordinator 1000 B$/);
    source.close();
  });

  it('refuses a fetcher with another key: nothing served, the file comes from the coordinator', async () => {
    const coord = coordinator();
    const source = peerSource({ coordinator: coord, snapshot, peers: peers(), key: randomBytes(32).toString('base64url'), log: (l) => logs.push(l) });
    expect((await fetchInto(source, files.held)).equals(files.held)).toBe(true);
    expect(coord.served).toEqual([sha(files.held)]);
    expect(server.counters).toMatchObject({ files: 0, bytes: 0 });
    expect(server.counters.refused).toBeGreaterThan(0);
    expect(logs.some((l) => /from peer beta .*refused: no proof of the snapshot key/.test(l))).toBe(true);
    expect(logs.some((l) => /project blob server: refused 127\.0\.0\.1: no proof of the snapshot key/.test(l))).toBe(true);
    source.close();
  });

  it('takes no corrupt bytes from a peer: the blob it holds no longer matches, so the coordinator sends it', async () => {
    fs.chmodSync(store.cache.blobPath(sha(files.held)), 0o644);
    const bad = Buffer.from(files.held);
    bad[1000] = bad[1000]! ^ 0xff;
    fs.writeFileSync(store.cache.blobPath(sha(files.held)), bad);
    const coord = coordinator();
    const source = peerSource({ coordinator: coord, snapshot, peers: peers(), key, log: (l) => logs.push(l) });
    expect((await fetchInto(source, files.held)).equals(files.held)).toBe(true);
    expect(coord.served).toEqual([sha(files.held)]);
    expect(source.counts.peers).toBe(0);
    expect(logs.some((l) => /from peer beta .*its bytes hash to/.test(l))).toBe(true);
    source.close();
  });

  it('answers a stranger with no key a nonce at most, never a byte of a file, and bounds its sockets', async () => {
    const open = (): Promise<Socket> => new Promise((resolve) => { const s = connect(port, '127.0.0.1', () => resolve(s)); s.on('error', () => undefined); });
    // Not a snapshot served here: refused at once.
    const s1 = await open();
    const r1 = new FrameReader(s1);
    s1.write(jsonFrame({ snapshot: 'a'.repeat(64), nonce: '0'.repeat(32) }));
    expect(await r1.nextJson(5000)).toEqual({ error: 'no such snapshot served here' });
    // The snapshot, but a forged proof: refused, and nothing after.
    const s2 = await open();
    const r2 = new FrameReader(s2);
    s2.write(jsonFrame({ snapshot, nonce: '1'.repeat(32) }));
    expect(typeof (await r2.nextJson(5000)).nonce).toBe('string');
    s2.write(jsonFrame({ proof: 'f'.repeat(64) }));
    expect(await r2.nextJson(5000)).toEqual({ error: 'no proof of the snapshot key (not a member told to prepare it)' });
    await expect(r2.next(5000)).rejects.toThrow(/closed/);
    expect(server.counters).toMatchObject({ files: 0, bytes: 0 });
    // Sockets past the per-address bound are closed at once; a silent one is closed after the handshake deadline.
    const held = await Promise.all([open(), open(), open()]);
    const extra = await open();
    await new Promise((resolve) => extra.once('close', resolve));
    const silent = held[0]!;
    await new Promise((resolve) => silent.once('close', resolve));
    for (const s of [...held, s1, s2]) s.destroy();
  });
});
