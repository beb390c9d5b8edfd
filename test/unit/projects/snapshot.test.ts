// The project snapshot on a real folder: ignore rules (nested .gitignore, negation, .gpushareignore, .git/),
// links inside kept and outside left out with a warning, FIFOs left out, limits naming the biggest paths, a hash
// that is stable and changes with any file, and a store that keeps each file once and refuses a linked folder.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { snapshotManifestSchema } from '../../../src-shared/projects/project-protocol';
import { ProjectStore } from '../../../src-main/core/projects/project-store';
import { walkProject } from '../../../src-main/core/projects/snapshot-walk';
import { manifestHash } from '../../../src-main/platform/projects/manifest-hash';
import { SymlinkRefusedError } from '../../../src-main/platform/files/refuse-symlink';

let root: string;
let proj: string;
let store: ProjectStore;

function write(rel: string, text: string | Buffer, mode?: number): void {
  const file = path.join(proj, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  if (mode !== undefined) fs.chmodSync(file, mode);
}

const paths = async (): Promise<string[]> => (await walkProject(proj)).entries.map((e) => e.path);
const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'snapshot-'));
  proj = path.join(root, 'proj');
  fs.mkdirSync(proj);
  store = new ProjectStore(path.join(root, 'data', 'projects'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('snapshot walk: what is left out', () => {
  it('honours the root and nested .gitignore files, negation, .gpushareignore, and always leaves .git/ out', async () => {
    write('train.py', 'print(1)\n');
    write('.gitignore', '*.log\n*.pt\nbuild/\ncheckpoints/\n!keep.log\n');
    write('pretrained.pt', 'brought back by .gpushareignore');
    write('other.pt', 'x');
    write('run.log', 'x');
    write('keep.log', 'kept by negation');
    write('build/out.o', 'x');
    write('checkpoints/a.pt', 'x');
    write('src/.gitignore', '*.tmp\n!important.log\n/local-only.txt\n');
    write('src/a.tmp', 'x');
    write('src/important.log', 'brought back by the deeper file');
    write('src/local-only.txt', 'x');
    write('src/deeper/local-only.txt', 'anchored to src/: this one stays');
    write('src/lib.py', 'x');
    write('.gpushareignore', 'data/raw/\n!pretrained.pt\n');
    write('data/raw/big.bin', 'x');
    write('data/shard-0.jsonl', '{}\n');
    write('.git/HEAD', 'ref: refs/heads/main\n');
    write('.git/objects/aa/bb', 'x');
    write('sub/.git', 'gitdir: ../.git/modules/sub\n');
    expect(await paths()).toEqual([
      '.gitignore',
      '.gpushareignore',
      'data/shard-0.jsonl',
      'keep.log',
      'pretrained.pt', // .gpushareignore is read last: its negation brings back what .gitignore left out
      'src/.gitignore',
      'src/deeper/local-only.txt',
      'src/important.log',
      'src/lib.py',
      'train.py',
    ]);
  });

  it('keeps a link inside the folder as a link and leaves one leading outside out, with a warning naming it', async () => {
    write('lib/real.py', 'x = 1\n');
    write('data/v2/a.bin', 'a');
    fs.symlinkSync('real.py', path.join(proj, 'lib/alias.py'));
    fs.symlinkSync(path.join(proj, 'data/v2'), path.join(proj, 'data/latest')); // absolute, but inside
    fs.symlinkSync('/etc/passwd', path.join(proj, 'passwd'));
    fs.symlinkSync('../../outside', path.join(proj, 'lib/escape'));
    fs.mkdirSync(path.join(root, 'outside'));
    fs.symlinkSync(path.join(root, 'outside'), path.join(proj, 'hop-target'));
    fs.symlinkSync('hop-target', path.join(proj, 'hop')); // inside by its text, outside where it leads
    const walk = await walkProject(proj);
    expect(walk.entries.filter((e) => e.kind === 'link')).toEqual([
      { kind: 'link', path: 'data/latest', target: 'v2' },
      { kind: 'link', path: 'lib/alias.py', target: 'real.py' },
    ]);
    const warned = walk.warnings.join('\n');
    for (const name of ['passwd', 'lib/escape', 'hop-target', 'hop']) expect(warned).toContain(`${name} left out: it is a symbolic link to`);
    expect(warned).toContain('/etc/passwd, outside the project folder');
  });

  it('leaves a FIFO out with a warning', async () => {
    write('train.py', 'x');
    execFileSync('mkfifo', [path.join(proj, 'pipe')]);
    const walk = await walkProject(proj);
    expect(walk.entries.map((e) => e.path)).toEqual(['train.py']);
    expect(walk.warnings).toEqual(['pipe left out: it is a FIFO (named pipe), not a regular file']);
  });

  it('over the limits, the refusal names the biggest paths and the ignore file', async () => {
    write('train.py', 'x');
    write('checkpoints/a.pt', Buffer.alloc(6000));
    write('checkpoints/b.pt', Buffer.alloc(5000));
    write('weights.bin', Buffer.alloc(3000));
    const refusal = walkProject(proj, { maxBytes: 10_000, maxFiles: 100 });
    await expect(refusal).rejects.toMatchObject({ status: 400 });
    const message = ((await refusal.catch((e: unknown) => e)) as Error).message;
    expect(message).toContain(`the project folder ${proj} holds`);
    expect(message).toMatch(/Biggest: checkpoints\/ \(0\.0 MiB, 2 files\), weights\.bin/);
    expect(message).toContain(`"checkpoints/" in ${path.join(proj, '.gpushareignore')}`);
    write('.gpushareignore', 'checkpoints/\n');
    expect((await walkProject(proj, { maxBytes: 10_000, maxFiles: 100 })).bytes).toBe(1 + 3000 + 'checkpoints/\n'.length);
    const many = walkProject(proj, { maxBytes: 1e9, maxFiles: 2 });
    await expect(many).rejects.toThrow(/3 files, over the limit of 2/);
  });
});

describe('snapshot store', () => {
  it('hashes each file into a manifest whose hash is stable, and changes when a file changes', async () => {
    write('train.py', 'print(1)\n', 0o755);
    write('data/x.jsonl', '{}\n');
    const first = await store.snapshot(proj);
    expect(snapshotManifestSchema.parse(first.manifest)).toEqual(first.manifest);
    expect(first.manifest.entries).toEqual([
      { kind: 'file', path: 'data/x.jsonl', sha256: sha('{}\n'), size: 3, executable: false },
      { kind: 'file', path: 'train.py', sha256: sha('print(1)\n'), size: 9, executable: true },
    ]);
    expect(first.hash).toBe(manifestHash(first.manifest));
    expect({ files: first.files, bytes: first.bytes, copiedFiles: first.copiedFiles }).toEqual({ files: 2, bytes: 12, copiedFiles: 2 });
    const again = await store.snapshot(proj);
    expect(again.hash).toBe(first.hash);
    expect(again.copiedFiles).toBe(0);
    write('train.py', 'print(2)\n', 0o755);
    const changed = await store.snapshot(proj);
    expect(changed.hash).not.toBe(first.hash);
    expect(changed.copiedFiles).toBe(1);
    fs.chmodSync(path.join(proj, 'train.py'), 0o644);
    expect((await store.snapshot(proj)).hash).not.toBe(changed.hash);
  });

  it('keeps each file once by its sha256, and the snapshot holds its bytes after the folder changes', async () => {
    write('a.txt', 'same bytes');
    write('b/c.txt', 'same bytes');
    const taken = await store.snapshot(proj);
    expect(taken.copiedFiles).toBe(1);
    const blobs = fs.readdirSync(path.join(store.dir, 'blobs'), { recursive: true }).filter((n) => String(n).length > 3);
    expect(blobs).toEqual([path.join(sha('same bytes').slice(0, 2), sha('same bytes'))]);
    write('a.txt', 'edited after the snapshot');
    const blob = store.openBlob(sha('same bytes'))!;
    const chunks: Buffer[] = [];
    for await (const c of blob.stream) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('same bytes');
    expect(store.manifest(taken.hash)).toEqual(taken.manifest);
    expect(fs.readdirSync(path.join(store.dir, 'tmp'))).toEqual([]);
  });

  it('a new store finds the manifest on disk; a damaged one reads as missing', async () => {
    write('train.py', 'x');
    const taken = await store.snapshot(proj);
    const reopened = new ProjectStore(store.dir);
    expect(reopened.manifest(taken.hash)).toEqual(taken.manifest);
    fs.writeFileSync(path.join(store.dir, 'manifests', `${taken.hash}.json`), '{"version":1,"entries":[]}');
    expect(new ProjectStore(store.dir).manifest(taken.hash)).toBeNull();
  });

  it('removes the snapshots no kept run names, and the files only they named', async () => {
    write('keep.txt', 'kept');
    const kept = await store.snapshot(proj);
    write('gone.txt', 'only in the second');
    const dropped = await store.snapshot(proj);
    expect(store.removeUnreferenced(new Set([kept.hash]))).toEqual({ manifests: 1, blobs: 1 });
    expect(store.manifest(dropped.hash)).toBeNull();
    expect(store.hasBlob(sha('kept'))).toBe(true);
    expect(store.hasBlob(sha('only in the second'))).toBe(false);
  });

  it('refuses a store folder that is a symbolic link, leaving it as it was', () => {
    const elsewhere = path.join(root, 'elsewhere');
    fs.mkdirSync(elsewhere);
    fs.symlinkSync(elsewhere, path.join(root, 'linked'));
    expect(() => new ProjectStore(path.join(root, 'linked'))).toThrow(SymlinkRefusedError);
    fs.mkdirSync(path.join(root, 'd2'));
    fs.symlinkSync(elsewhere, path.join(root, 'd2', 'blobs'));
    expect(() => new ProjectStore(path.join(root, 'd2'))).toThrow(/project store blobs/);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });
});
