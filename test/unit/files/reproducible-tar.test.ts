/**
 * The reproducible tarball of a job's output: the same contents give the same bytes whatever the times, modes,
 * owners and creation order; what is inside reads back with the system's own tar; symlinks out of the folder
 * are refused and FIFOs/sockets skipped.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listPackable, packReproducibleTar, PackRefusedError } from '../../../src-main/platform/files/reproducible-tar';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'gpu-share-tar-'));
  dirs.push(d);
  return d;
}

/** The same output written two different ways. */
function writeOutput(root: string, variant: 'a' | 'b'): void {
  const files: [string, string][] = [
    ['adapter_config.json', '{"r":8}\n'],
    ['adapter_model.safetensors', 'x'.repeat(70_000)],
    ['logs/metrics.json', '{"loss":0.5}\n'],
    ['logs/deeper/run.sh', '#!/bin/sh\necho hi\n'],
  ];
  const order = variant === 'a' ? files : [...files].reverse();
  for (const [name, text] of order) {
    mkdirSync(path.join(root, path.dirname(name)), { recursive: true });
    writeFileSync(path.join(root, name), text);
  }
  chmodSync(path.join(root, 'logs/deeper/run.sh'), variant === 'a' ? 0o755 : 0o700);
  chmodSync(path.join(root, 'adapter_config.json'), variant === 'a' ? 0o644 : 0o664);
  chmodSync(path.join(root, 'logs'), variant === 'a' ? 0o755 : 0o775);
  const when = variant === 'a' ? new Date('2020-01-01T00:00:00Z') : new Date('2026-06-30T12:34:56Z');
  for (const name of ['adapter_config.json', 'logs/metrics.json', 'logs', 'logs/deeper']) utimesSync(path.join(root, name), when, when);
  symlinkSync('adapter_config.json', path.join(root, 'config-link'));
  if (variant === 'b') {
    // A hard link must store the file whole, as a copy would.
    rmSync(path.join(root, 'logs/metrics.json'));
    writeFileSync(path.join(root, 'metrics-original.tmp'), '{"loss":0.5}\n');
    linkSync(path.join(root, 'metrics-original.tmp'), path.join(root, 'logs/metrics.json'));
    rmSync(path.join(root, 'metrics-original.tmp'));
    linkSync(path.join(root, 'adapter_model.safetensors'), path.join(tempDir(), 'elsewhere'));
  }
}

describe('packReproducibleTar', () => {
  it('gives identical bytes for identical contents written with other times, modes, order and links', async () => {
    const [a, b, out] = [tempDir(), tempDir(), tempDir()];
    writeOutput(a, 'a');
    writeOutput(b, 'b');
    const packedA = await packReproducibleTar(a, path.join(out, 'a.tar.gz'));
    const packedB = await packReproducibleTar(b, path.join(out, 'b.tar.gz'));
    const bytesA = readFileSync(path.join(out, 'a.tar.gz'));
    const bytesB = readFileSync(path.join(out, 'b.tar.gz'));
    expect(bytesA.equals(bytesB)).toBe(true);
    expect(packedA.sha256).toBe(createHash('sha256').update(bytesA).digest('hex'));
    expect(packedA).toEqual(packedB);
    expect(packedA.sizeBytes).toBe(bytesA.length);
    // gzip header: magic, deflate, no flags (no name), mtime 0.
    expect([...bytesA.subarray(0, 8)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0]);
    expect(packedA.entries).toEqual([
      'adapter_config.json',
      'adapter_model.safetensors',
      'config-link',
      'logs/',
      'logs/deeper/',
      'logs/deeper/run.sh',
      'logs/metrics.json',
    ]);
  });

  it('normalises what the system tar shows: names, modes, owners, times, the link', async () => {
    const [root, out] = [tempDir(), tempDir()];
    writeOutput(root, 'b');
    const file = path.join(out, 'o.tar.gz');
    await packReproducibleTar(root, file);
    const listing = spawnSync('tar', ['--numeric-owner', '--full-time', '-tvzf', file], { encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } });
    expect(listing.status, listing.stderr).toBe(0);
    const lines = listing.stdout.trim().split('\n');
    expect(lines).toHaveLength(7);
    for (const line of lines) expect(line).toMatch(/^[-dl]rw.r..r.. 0\/0 +\d+ 1970-01-01 00:00:00 /);
    expect(lines.find((l) => l.endsWith('run.sh'))).toMatch(/^-rwxr-xr-x /);
    expect(lines.find((l) => l.endsWith('adapter_config.json'))).toMatch(/^-rw-r--r-- /);
    expect(lines.find((l) => l.endsWith(' logs/'))).toMatch(/^drwxr-xr-x /);
    expect(lines.find((l) => l.includes('config-link'))).toMatch(/config-link -> adapter_config.json$/);
    expect(lines.find((l) => l.endsWith('logs/metrics.json'))).toMatch(/^-rw-r--r-- 0\/0 +13 /);
    // And the contents come back.
    const back = tempDir();
    expect(spawnSync('tar', ['-xzf', file, '-C', back]).status).toBe(0);
    expect(readFileSync(path.join(back, 'logs/deeper/run.sh'), 'utf8')).toBe('#!/bin/sh\necho hi\n');
    expect(readFileSync(path.join(back, 'adapter_model.safetensors'), 'utf8')).toHaveLength(70_000);
  });

  it('packs an empty folder as a valid empty archive', async () => {
    const [root, out] = [tempDir(), tempDir()];
    const packed = await packReproducibleTar(root, path.join(out, 'e.tar.gz'));
    expect(packed.entries).toEqual([]);
    expect(spawnSync('tar', ['-tzf', path.join(out, 'e.tar.gz')]).status).toBe(0);
  });

  it('refuses a symlink out of the folder, naming it, and writes nothing', async () => {
    for (const target of ['/etc/passwd', '../../outside', '../sub/../../x']) {
      const [root, out] = [tempDir(), tempDir()];
      writeFileSync(path.join(root, 'ok.txt'), 'fine');
      mkdirSync(path.join(root, 'sub'));
      symlinkSync(target, path.join(root, 'sub', 'escape'));
      const file = path.join(out, 'x.tar.gz');
      const error = await packReproducibleTar(root, file).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PackRefusedError);
      expect((error as Error).message).toBe(
        `sub/escape is a symbolic link to ${target}, which leads outside the output folder once the links on its way are followed (or loops); copy the file into the folder instead of linking to it`,
      );
      expect(() => readFileSync(file)).toThrow();
    }
  });

  it('resolves links as the file system does: t -> d/s/.. with d/s -> .. leads outside and is refused', async () => {
    const [root, out] = [tempDir(), tempDir()];
    mkdirSync(path.join(root, 'd'));
    symlinkSync('..', path.join(root, 'd', 's')); // d/s is the output folder itself: inside
    symlinkSync('d/s/..', path.join(root, 't')); // as text inside; followed, the folder above the output
    const file = path.join(out, 'x.tar.gz');
    const error = await packReproducibleTar(root, file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PackRefusedError);
    expect((error as Error).message).toContain('t is a symbolic link to d/s/.., which leads outside the output folder');
    expect(() => readFileSync(file)).toThrow();
    // What the OS says, for the record: the link really does reach the parent of the output folder (the kernel's
    // realpath; Node's JS realpathSync applies the `..` as text first and would say "d").
    expect(path.relative(root, realpathSync.native(path.join(root, 't')))).toBe('..');
  });

  it('refuses a link loop and a link through a link that leaves, and still packs links that stay inside', async () => {
    for (const make of [
      (root: string) => {
        symlinkSync('b', path.join(root, 'a'));
        symlinkSync('a', path.join(root, 'b'));
      },
      (root: string) => {
        mkdirSync(path.join(root, 'x'));
        symlinkSync('..', path.join(root, 'up'));
        symlinkSync('../up/..', path.join(root, 'x', 'far')); // x/.. = root, root/up = root/.., .. = above that
      },
    ]) {
      const [root, out] = [tempDir(), tempDir()];
      make(root);
      await expect(packReproducibleTar(root, path.join(out, 'x.tar.gz'))).rejects.toBeInstanceOf(PackRefusedError);
    }
    const [root, out] = [tempDir(), tempDir()];
    mkdirSync(path.join(root, 'd', 'e'), { recursive: true });
    writeFileSync(path.join(root, 'd', 'e', 'w.bin'), 'weights');
    symlinkSync('e', path.join(root, 'd', 'cur')); // d/cur -> d/e
    symlinkSync('d/cur/../e/w.bin', path.join(root, 'latest')); // d/cur/.. = d: inside
    symlinkSync('missing/../d', path.join(root, 'dangling-ok'));
    const packed = await packReproducibleTar(root, path.join(out, 'ok.tar.gz'));
    expect(packed.entries).toEqual(['d/', 'd/cur', 'd/e/', 'd/e/w.bin', 'dangling-ok', 'latest']);
  });

  it('skips FIFOs and sockets', async () => {
    const root = tempDir();
    writeFileSync(path.join(root, 'keep.txt'), 'k');
    expect(spawnSync('mkfifo', [path.join(root, 'pipe')]).status).toBe(0);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(root, 'sock'), resolve));
    try {
      expect(listPackable(root)).toEqual(['keep.txt']);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
