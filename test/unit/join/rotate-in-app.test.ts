/**
 * "Replace join token" in the app (IPC rotateJoinToken) and the running coordinator: the new token is in the join
 * command and secrets.json at once, the coordinator proves it at once, and the replaced one is still held (for the
 * machines already approved).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAppCore } from '../../../src-main/app/app-core';
import type { AppCore } from '../../../src-main/app/app-core-types';
import { proveCoordinator } from '../../../src-main/agent/coordinator-proof';
import { dispatchRequest } from '../../../src-main/app/ipc-dispatch';
import { nodePtySpawner } from '../../../src-main/platform/pty/node-pty-spawner';

let dir: string;
let core: AppCore;

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-rotate-'));
  core = await createAppCore({ userData: dir, notifier: { notify: () => undefined }, pty: nodePtySpawner, coordinatorPort: 0, localWorker: false, hardwarePollMs: 0, env: { ...process.env, GPU_SHARE_NO_DISCOVERY: '1' } });
});
afterEach(async () => {
  await core.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('rotateJoinToken in the app', () => {
  it('answers the new join command, keeps it in secrets.json, and the coordinator proves the new token at once', async () => {
    const before = await core.handlers.getCoordinatorInfo(undefined);
    const after = (await dispatchRequest(core.handlers, 'rotateJoinToken', undefined)) as Awaited<ReturnType<typeof core.handlers.rotateJoinToken>>;
    expect(after.joinToken).not.toBe(before.joinToken);
    expect(after.joinCommand).toBe(`GPU_SHARE_JOIN_TOKEN=${after.joinToken} gpu-share worker --join ${after.url}`);
    // The Add a worker panel's install command carries the new token the same way (in the environment).
    expect(after.installCommand).toBe(`GPU_SHARE_JOIN_TOKEN=${after.joinToken} gpu-share worker install --join ${after.url}`);
    expect((await core.handlers.getCoordinatorInfo(undefined)).joinToken).toBe(after.joinToken);
    const stored = JSON.parse(readFileSync(path.join(dir, 'secrets.json'), 'utf8')) as { joinToken: string; retiredJoinTokens: string[] };
    expect(stored).toMatchObject({ joinToken: after.joinToken, retiredJoinTokens: [before.joinToken] });
    expect(await proveCoordinator({ url: after.url, token: after.joinToken })).toEqual({ ok: true });
    // The replaced token is still held: an approved machine's agent proves it (its join is then checked for approval).
    expect(await proveCoordinator({ url: after.url, token: before.joinToken })).toEqual({ ok: true });
    expect(await proveCoordinator({ url: after.url, token: 'never-issued-token-xxxxxxxxxxxxxxxx' })).toMatchObject({ ok: false });
  });
});
