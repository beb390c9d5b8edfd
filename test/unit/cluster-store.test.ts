/** ClusterStore against real files: load outcomes, validated atomic saves with .bak, and SIGKILL mid-save. */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, promises as fs, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterStore } from '../../src-main/app/cluster-store';
import { parseClusterYaml, serializeClusterYaml, type ClusterConfig } from '../../src-shared/cluster/index';
import { bundleChildScript } from './files/bundle-child';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.join(here, '../fixtures/cluster');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-store-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let counter = 0;
function freshPath(name = 'cluster.yaml'): string {
  return path.join(dir, `case-${++counter}`, name);
}

const small = (slots = 1): ClusterConfig => ({
  nodes: [{ name: 'desktop', host: 'localhost', transport: 'local', gpus: [{ uuid: 'GPU-1', type: 'rtx-4090', vram_mb: 24564, memory_type: 'discrete' }], max_adapters: slots }],
});

async function tempsIn(folder: string): Promise<string[]> {
  return (await fs.readdir(folder)).filter((n) => n.includes('.tmp-'));
}

describe('load', () => {
  it('a missing file is no cluster and no error', async () => {
    expect(await new ClusterStore(freshPath()).load()).toEqual({ config: null, warnings: [], errors: [] });
  });

  it('an invalid file gives errors with line:col and is left byte for byte, mtime included', async () => {
    const file = freshPath();
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.copyFile(path.join(fixtures, 'invalid-type.yaml'), file);
    const before = await fs.stat(file);
    const bytes = await fs.readFile(file);
    const loaded = await new ClusterStore(file).load();
    expect(loaded.config).toBeNull();
    expect(loaded.errors.map((e) => `${e.line}:${e.col} ${e.message}`)).toEqual(['7:18 nodes[0].gpus[0].vram_mb must be a whole number of MB, got "lots"']);
    expect(await fs.readFile(file)).toEqual(bytes);
    expect((await fs.stat(file)).mtimeMs).toBe(before.mtimeMs);
  });

  it('warnings come through with a valid config', async () => {
    const file = freshPath();
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.copyFile(path.join(fixtures, 'warn-unknown-key.yaml'), file);
    const loaded = await new ClusterStore(file).load();
    expect(loaded.config?.nodes[0]?.name).toBe('desktop');
    expect(loaded.warnings).toHaveLength(2);
    expect(loaded.errors).toEqual([]);
  });

  it('a folder, a file over 1 MiB (never read whole) and a UTF-16 file are errors naming the file', async () => {
    const folder = freshPath();
    await fs.mkdir(folder, { recursive: true });
    expect((await new ClusterStore(folder).load()).errors[0]?.message).toBe(`${folder} is a folder, not a file; give the path of the cluster.yaml inside it`);

    const huge = freshPath();
    await fs.mkdir(path.dirname(huge), { recursive: true });
    const handle = await fs.open(huge, 'w');
    await handle.truncate(5 * 1024 * 1024 * 1024); // sparse 5 GiB: reading it would be noticed
    await handle.close();
    expect((await new ClusterStore(huge).load()).errors[0]?.message).toMatch(/is larger than 1 MiB \(5368709120 bytes\)/);

    const utf16 = freshPath();
    await fs.mkdir(path.dirname(utf16), { recursive: true });
    await fs.writeFile(utf16, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('nodes: []', 'utf16le')]));
    expect((await new ClusterStore(utf16).load()).errors[0]?.message).toBe(`${utf16} is saved as UTF-16; save it as UTF-8 and try again`);
  });
});

describe('save', () => {
  it('writes what serialize writes, creates the folder, and loads back equal', async () => {
    const file = freshPath();
    const store = new ClusterStore(file);
    await store.save(small(2));
    expect(await fs.readFile(file, 'utf8')).toBe(serializeClusterYaml(small(2)));
    expect((await store.load()).config).toEqual(small(2));
    expect(existsSync(`${file}.bak`)).toBe(false);
    expect(await tempsIn(path.dirname(file))).toEqual([]);
  });

  it('keeps the previous version as cluster.yaml.bak', async () => {
    const file = freshPath();
    const store = new ClusterStore(file);
    await store.save(small(1));
    await store.save(small(2));
    await store.save(small(3));
    expect(parseClusterYaml(await fs.readFile(`${file}.bak`, 'utf8'))).toMatchObject({ ok: true, config: small(2) });
    expect((await store.load()).config).toEqual(small(3));
  });

  it('an invalid cluster throws, listing every problem, and the file, .bak and folder are untouched', async () => {
    const file = freshPath();
    const store = new ClusterStore(file);
    await store.save(small(1));
    await store.save(small(2));
    const [bytes, bak] = await Promise.all([fs.readFile(file), fs.readFile(`${file}.bak`)]);
    const bad: ClusterConfig = {
      nodes: [
        { name: 'a', host: 'localhost', transport: 'ssh', gpus: [], max_adapters: 0 },
        { name: 'a', host: 'h', transport: 'local', gpus: [{ uuid: 'G', type: 't', vram_mb: 0, memory_type: 'discrete' }], max_adapters: 1 },
      ],
    };
    await expect(store.save(bad)).rejects.toThrow(
      [
        `Refusing to save ${file}: the cluster is invalid, so the file was left as it was:`,
        "  cluster.yaml: error: node 'a': max_adapters must be >= 1",
        "  cluster.yaml: error: node 'a': SSH transport requires a host other than localhost",
        '  cluster.yaml: error: duplicate node name: a',
        "  cluster.yaml: error: node 'a': GPU 'G' has zero VRAM",
      ].join('\n'),
    );
    await expect(store.save({ nodes: [] })).rejects.toThrow('cluster must have at least one node');
    expect(await fs.readFile(file)).toEqual(bytes);
    expect(await fs.readFile(`${file}.bak`)).toEqual(bak);
    expect(await tempsIn(path.dirname(file))).toEqual([]);
  });

  it('a config that passes the rules but would not read back (vram_mb 1.5) is refused too', async () => {
    const file = freshPath();
    const config = small();
    config.nodes[0]!.gpus[0]!.vram_mb = 1.5;
    await expect(new ClusterStore(file).save(config)).rejects.toThrow(/vram_mb must be a whole number of MB, got 1.5/);
    expect(existsSync(file)).toBe(false);
  });

  it('overlapping saves land in call order; the last one wins and no temp file is left', async () => {
    const file = freshPath();
    const store = new ClusterStore(file);
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.save(small(i + 1))));
    expect((await store.load()).config).toEqual(small(10));
    expect((await new ClusterStore(`${file}.bak`).load()).config).toEqual(small(9));
    expect(await tempsIn(path.dirname(file))).toEqual([]);
  });

  it('a failed save does not block the next one', async () => {
    const store = new ClusterStore(freshPath());
    await expect(store.save({ nodes: [] })).rejects.toThrow();
    await store.save(small(4));
    expect((await store.load()).config).toEqual(small(4));
  });

  it('keeps a symlinked cluster.yaml a link, and keeps the file mode', async () => {
    const real = freshPath('real.yaml');
    await fs.mkdir(path.dirname(real), { recursive: true });
    await fs.writeFile(real, serializeClusterYaml(small(1)), { mode: 0o600 });
    const link = path.join(path.dirname(real), 'cluster.yaml');
    await fs.symlink(real, link);
    await new ClusterStore(link).save(small(5));
    expect((await fs.lstat(link)).isSymbolicLink()).toBe(true);
    expect((await new ClusterStore(real).load()).config).toEqual(small(5));
    expect((await fs.stat(real)).mode & 0o777).toBe(0o600);
  });

  it('removes temp files left by dead processes, never those of a live one', async () => {
    const file = freshPath();
    const folder = path.dirname(file);
    await fs.mkdir(folder, { recursive: true });
    const dead = await deadPid();
    const stale = path.join(folder, `cluster.yaml.tmp-${dead}-0badf00d`);
    const staleBak = path.join(folder, `cluster.yaml.bak.tmp-${dead}-0badf00d`);
    const live = path.join(folder, `cluster.yaml.tmp-${process.ppid}-0badf00d`);
    for (const f of [stale, staleBak, live]) await fs.writeFile(f, 'partial');
    await new ClusterStore(file).save(small());
    expect((await tempsIn(folder)).sort()).toEqual([path.basename(live)]);
  });
});

/** The pid of a process that has just exited (so no process has it, barring immediate reuse). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('crash safety', () => {
  let childScript: string;

  beforeAll(async () => {
    childScript = await bundleChildScript(path.join(fixtures, 'save-loop-child.ts'), path.join(dir, 'save-loop-child.mjs'));
  });

  it('SIGKILL at random moments during a loop of large saves always leaves a cluster.yaml that loads', async () => {
    const file = freshPath();
    const kills: string[] = [];
    for (let round = 0; round < 8; round++) {
      const child = spawn(process.execPath, [childScript, file, '300'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let saves = 0;
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (saves += (chunk.toString().match(/saved/g) ?? []).length));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      try {
        // Wait until the child is warm and saving in a loop (two saves done). Most of a save is CPU work
        // (serialize, re-parse), so a purely random kill rarely lands while bytes are being written: odd
        // rounds kill at a random moment, even rounds the instant the folder changes (the temp file
        // appearing, or the file itself being written) plus 0, 1 or 3 ms, which is the window that matters.
        const started = Date.now();
        while (saves < 2 && child.exitCode === null && Date.now() - started < 30_000) {
          await new Promise((r) => setTimeout(r, 5));
        }
        expect(child.exitCode, stderr).toBeNull();
        if (round % 2 === 0) {
          const delay = [0, 0, 1, 3][round % 8 >> 1]!;
          await new Promise<void>((resolve) => {
            const watcher = watch(path.dirname(file), () => {
              watcher.close();
              if (delay === 0) {
                child.kill('SIGKILL');
                resolve();
              } else setTimeout(resolve, delay);
            });
          });
          child.kill('SIGKILL');
          kills.push(`${delay} ms after a write began (${saves} saves)`);
        } else {
          const delay = Math.floor(Math.random() * 250);
          await new Promise((r) => setTimeout(r, delay));
          child.kill('SIGKILL');
          kills.push(`${delay} ms at random (${saves} saves)`);
        }
        expect(await exited).toBe('SIGKILL');
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      expect(stderr).toBe('');
      const loaded = await new ClusterStore(file).load();
      expect(loaded.errors, `round ${round}: ${kills.at(-1)}`).toEqual([]);
      expect(loaded.config?.nodes).toHaveLength(300);
      // Never a torn mix of two saves: every node carries the same iteration's max_adapters.
      expect(new Set(loaded.config!.nodes.map((n) => n.max_adapters)).size).toBe(1);
      if (existsSync(`${file}.bak`)) expect((await new ClusterStore(`${file}.bak`).load()).errors).toEqual([]);
    }
    // The next save clears what the killed writers left behind.
    await new ClusterStore(file).save(small());
    expect(await tempsIn(path.dirname(file))).toEqual([]);
    console.info(`cluster-store crash test: killed ${kills.join('; ')}`);
  }, 120_000);
});
