/** `gpu-share validate` through runCli with captured output: exit codes 0/1/2, text and --json. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src-main/cli/run-cli';
import { fixturesDir } from './helpers';

interface Captured {
  code: number;
  out: string;
  err: string;
}

/** Runs from the repository's test/fixtures/cluster folder so FILE arguments stay short, as a person types them. */
async function cli(...args: string[]): Promise<Captured> {
  let out = '';
  let err = '';
  const code = await runCli(args, { out: (t) => (out += t), err: (t) => (err += t), env: {}, cwd: fixturesDir });
  return { code, out, err };
}

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'gpu-share-validate-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('gpu-share validate', () => {
  it('valid: the summary and one budget line per node on stdout, exit 0', async () => {
    const r = await cli('validate', 'sample.yaml');
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toBe(
      [
        'Cluster: 3 node(s), 5 adapter slots',
        '  desktop: localhost (local) [rtx-4090 24564 MB Discrete] max_adapters=3',
        '  jetson: jetson.local (ssh) [jetson-orin 8192 MB Unified] max_adapters=1',
        '  intel-box: 10.0.0.5 (ssh) [CPU-only] max_adapters=1',
        '',
        'Budgets (usable = 85 % of discrete, 60 % of unified memory):',
        '  desktop: 20879 MB usable of 24564 MB (85 %), 3 adapter slots',
        '  jetson: 4915 MB usable of 8192 MB (60 %), 1 adapter slot',
        '  intel-box: CPU-only (16 cores, 65536 MB RAM), 1 adapter slot',
        '',
      ].join('\n'),
    );
  });

  it('valid with warnings: FILE:L:C: warning lines on stderr, still exit 0', async () => {
    const r = await cli('validate', 'warn-unknown-key.yaml');
    expect(r.code).toBe(0);
    expect(r.err.split('\n')[0]).toBe(
      'warn-unknown-key.yaml:4:5: warning: nodes[0].gpu is not a cluster.yaml key (did you mean gpus?); it is ignored — known keys here: name, host, transport, user, gpus, max_adapters, cpu_cores, ram_mb',
    );
    expect(r.out).toContain('desktop: CPU-only, 2 adapter slots');
  });

  it('invalid: FILE:L:C: error lines on stderr, nothing on stdout, exit 1', async () => {
    const r = await cli('validate', 'invalid-many.yaml');
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      [
        "invalid-many.yaml:4:11: error: node 'box1': SSH transport requires a host other than localhost",
        "invalid-many.yaml:6:19: error: node 'box1': max_adapters must be >= 1",
        'invalid-many.yaml:7:11: error: duplicate node name: box1',
        "invalid-many.yaml:14:15: error: node 'box1': duplicate GPU UUID 'GPU-same'",
        'invalid-many.yaml:16:18: error: nodes[1].gpus[1].vram_mb must be a whole number of MB, got -5',
        '',
      ].join('\n'),
    );
  });

  it('the invalid fixtures used by the e2e tests fail with their one error', async () => {
    expect((await cli('validate', 'invalid-zero-vram.yaml')).err).toBe("invalid-zero-vram.yaml:8:18: error: node 'bad': GPU 'GPU-bad' has zero VRAM\n");
    expect((await cli('validate', 'invalid-type.yaml')).err).toBe('invalid-type.yaml:7:18: error: nodes[0].gpus[0].vram_mb must be a whole number of MB, got "lots"\n');
  });

  it('missing file and folder: a message naming FILE and what to do, exit 2', async () => {
    const missing = await cli('validate', 'nope.yaml');
    expect(missing).toEqual({ code: 2, out: '', err: 'gpu-share validate: nope.yaml does not exist; check the path, or start from assets/examples/cluster.yaml\n' });
    const folder = await cli('validate', '.');
    expect(folder.code).toBe(2);
    expect(folder.err).toBe('gpu-share validate: . is a folder, not a file; give the path of the cluster.yaml inside it\n');
  });

  it('an unreadable file (permission denied) is exit 2', async () => {
    const file = path.join(scratch, 'locked.yaml');
    writeFileSync(file, 'nodes: []\n', { mode: 0o000 });
    const r = await cli('validate', file);
    // root reads anything, so the permission case only shows for other users; either way it is never a crash.
    if (process.getuid?.() === 0) expect(r.code).toBe(1);
    else expect(r).toMatchObject({ code: 2, err: expect.stringContaining('permission denied') });
  });

  it('a file over 1 MiB is refused without being read, exit 1', async () => {
    const file = path.join(scratch, 'big.yaml');
    writeFileSync(file, `# ${'x'.repeat(1024 * 1024)}\n`);
    const r = await cli('validate', file);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/is larger than 1 MiB \(1048579 bytes\)/);
  });

  it('--json valid: ok, file, summary, warnings and per-node budgets', async () => {
    const r = await cli('validate', 'sample.yaml', '--json');
    expect(r.code).toBe(0);
    const body = JSON.parse(r.out);
    expect(body).toMatchObject({ ok: true, file: 'sample.yaml', warnings: [] });
    expect(body.summary).toMatch(/^Cluster: 3 node\(s\), 5 adapter slots\n/);
    expect(body.nodes).toEqual([
      { name: 'desktop', totalVramMb: 24564, usableVramMb: 20879, adapterSlots: 3 },
      { name: 'jetson', totalVramMb: 8192, usableVramMb: 4915, adapterSlots: 1 },
      { name: 'intel-box', totalVramMb: 0, usableVramMb: 0, adapterSlots: 1 },
    ]);
  });

  it('--json invalid and --json missing: ok false with errors, exits 1 and 2', async () => {
    const invalid = await cli('validate', '--json', 'invalid-type.yaml');
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.out)).toEqual({
      ok: false,
      file: 'invalid-type.yaml',
      errors: [
        {
          severity: 'error',
          message: 'nodes[0].gpus[0].vram_mb must be a whole number of MB, got "lots"',
          path: ['nodes', 0, 'gpus', 0, 'vram_mb'],
          line: 7,
          col: 18,
        },
      ],
      warnings: [],
      nodes: [],
    });
    const missing = await cli('validate', 'nope.yaml', '--json');
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.out)).toMatchObject({ ok: false, file: 'nope.yaml', errors: [{ message: expect.stringContaining('does not exist') }] });
  });

  it('--help, no FILE, two FILEs and unknown options', async () => {
    const help = await cli('validate', '--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: gpu-share validate FILE \[--json\]/);
    const none = await cli('validate');
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/^gpu-share validate: give the cluster.yaml to check/);
    expect((await cli('validate', 'a.yaml', 'b.yaml')).err).toMatch(/give exactly one FILE/);
    expect((await cli('validate', 'sample.yaml', '--jsn')).err).toMatch(/unknown option --jsn/);
  });

  it('is listed in gpu-share --help', async () => {
    expect((await cli('--help')).out).toMatch(/validate\s+check a cluster.yaml/);
  });
});
