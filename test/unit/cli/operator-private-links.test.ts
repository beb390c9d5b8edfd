// The operator CLI and `gpu-share nodes` read the data folder's tokens and TLS identity without following a
// symbolic link: a planted link would choose the token it sends or the certificate it trusts.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveOperatorTarget } from '../../../src-main/cli/operator/operator-target';
import { coordinatorJoin } from '../../../src-main/cli/commands/nodes/nodes-context';
import { writeCoordinatorRecord } from '../../../src-main/app/coordinator-record';

let dir: string;
let data: string;
let target: string;
const io = { env: {}, cwd: '/', err: () => undefined };

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-op-links-'));
  data = path.join(dir, 'data');
  target = path.join(dir, 'elsewhere.json');
  writeFileSync(target, JSON.stringify({ joinToken: 'planted-join-token-planted-join', operatorToken: 'planted-operator-token-planted-op' }));
  chmodSync(target, 0o644);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function linkSecrets(): void {
  mkdirSync(data, { recursive: true });
  symlinkSync(target, path.join(data, 'secrets.json'));
}

describe('a symlinked secrets.json', () => {
  it('is refused by the operator CLI, naming the file, and the target is left as it was', async () => {
    linkSecrets();
    await expect(resolveOperatorTarget({ 'data-dir': data, url: 'http://127.0.0.1:1' }, io)).rejects.toThrow(/secrets\.json.*(link|symbolic)/is);
    expect(statSync(target).mode & 0o777).toBe(0o644);
    expect(readFileSync(target, 'utf8')).toContain('planted-operator-token');
  });

  it('is refused by `gpu-share nodes`, which never reads the planted join token', async () => {
    linkSecrets();
    await writeCoordinatorRecord(data, { url: 'http://127.0.0.1:7421', pid: process.pid, certSha256: null, startedAt: 1 });
    await expect(coordinatorJoin(data, undefined)).rejects.toThrow(/secrets\.json.*(link|symbolic)/is);
    expect(statSync(target).mode & 0o777).toBe(0o644);
  });
});
