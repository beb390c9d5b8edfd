// `gpu-share add-this-machine` as a user runs it: detect, add, run again to update, refuse a broken file.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseClusterYaml } from '../../src-shared/cluster/index';
import { runCli } from '../../src-main/cli/run-cli';

const fixtures = path.resolve(__dirname, '..', 'fixtures');

describe('gpu-share add-this-machine', () => {
  let dir: string;
  let out: string;
  let err: string;
  const io = () => ({
    out: (t: string) => void (out += t),
    err: (t: string) => void (err += t),
    cwd: dir,
    env: {
      ...process.env,
      GPU_SHARE_HOME: dir,
      GPU_SHARE_NVIDIA_SMI: path.join(fixtures, 'bin', 'nvidia-smi'),
      FAKE_NVIDIA_SMI_QUERY_GPU: path.join(fixtures, 'nvidia-smi', 'query-gpu-csv-header-units-consumer-x3.txt'),
    },
  });

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-add-'));
    out = '';
    err = '';
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('adds this machine to the app cluster, then updates it on a second run', async () => {
    expect(await runCli(['add-this-machine'], io())).toBe(0);
    expect(out).toMatch(/^Added node '.+' \(.+MB discrete.*\) in .*cluster\.yaml/);
    const file = path.join(dir, 'cluster.yaml');
    const first = parseClusterYaml(readFileSync(file, 'utf8'));
    expect(first.ok && first.config.nodes[0]!.gpus).toHaveLength(3);
    out = '';
    expect(await runCli(['add-this-machine', '--cluster', file], io())).toBe(0);
    expect(out).toMatch(/^Updated node/);
    const second = parseClusterYaml(readFileSync(file, 'utf8'));
    expect(second.ok && second.config.nodes).toHaveLength(1);
  });

  it('keeps other nodes and prints instead of writing with --dry-run', async () => {
    const file = path.join(dir, 'mine.yaml');
    writeFileSync(file, readFileSync(path.join(fixtures, 'cluster', 'sample.yaml')));
    const before = readFileSync(file, 'utf8');
    expect(await runCli(['add-this-machine', '--cluster', file, '--dry-run'], io())).toBe(0);
    // The sample's desktop node is localhost: this machine, updated rather than added beside it.
    const printed = parseClusterYaml(out);
    expect(printed.ok && printed.config.nodes.length).toBe(3);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('refuses to touch an invalid cluster file and says how to see why', async () => {
    const file = path.join(dir, 'bad.yaml');
    writeFileSync(file, readFileSync(path.join(fixtures, 'cluster', 'invalid-zero-vram.yaml')));
    const before = readFileSync(file, 'utf8');
    expect(await runCli(['add-this-machine', '--cluster', file], io())).toBe(1);
    expect(err).toMatch(/zero VRAM/);
    expect(err).toMatch(/left untouched/);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('refuses a FILE given without --cluster instead of silently updating the app cluster', async () => {
    const file = path.join(dir, 'mine.yaml');
    writeFileSync(file, readFileSync(path.join(fixtures, 'cluster', 'sample.yaml')));
    const before = readFileSync(file, 'utf8');
    expect(await runCli(['add-this-machine', file], io())).toBe(2);
    expect(err).toContain(`unexpected argument "${file}"; to update that file, give it as --cluster ${file}`);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(existsSync(path.join(dir, 'cluster.yaml'))).toBe(false);
  });

  it('a cluster file that cannot be written is reported with its path and exit 1, not a stack trace', async () => {
    // 240 characters is a legal file name, but the temp file beside it (name + .tmp-PID-RANDOM) is over NAME_MAX.
    const file = path.join(dir, `${'c'.repeat(235)}.yaml`);
    expect(await runCli(['add-this-machine', '--cluster', file], io())).toBe(1);
    expect(err).toContain(`gpu-share add-this-machine: could not write ${file} (`);
    expect(err).toMatch(/ENAMETOOLONG.*\); nothing was changed\n$/);
    expect(err).not.toMatch(/\n\s+at /);
    expect(existsSync(file)).toBe(false);
  });

  it('a cluster path that cannot be read says why with exit 2, not "not valid"', async () => {
    writeFileSync(path.join(dir, 'a-file'), '');
    const file = path.join(dir, 'a-file', 'cluster.yaml');
    expect(await runCli(['add-this-machine', '--cluster', file], io())).toBe(2);
    expect(err).toBe(`gpu-share add-this-machine: ${file} cannot be read (ENOTDIR: not a directory, open '${file}'); check that it is a readable file\n`);
    mkdirSync(path.join(dir, 'folder'));
    err = '';
    expect(await runCli(['add-this-machine', '--cluster', path.join(dir, 'folder')], io())).toBe(2);
    expect(err).toMatch(/folder is a folder, not a file; give the path of the cluster\.yaml inside it\n$/);
  });
});
