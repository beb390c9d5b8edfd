/**
 * Puts the worker agent on a node: ONE self-contained bundle (gpu-share-agent.cjs, everything but node-pty inside)
 * and the assets training needs (trainers, launcher, corpus), copied over SFTP into
 * ~/.gpu-share/agent/<version>/ when that version is not there yet. The copy goes to a temporary folder that is
 * renamed at the end, so a half-copied agent is never taken for a complete one.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { SFTPWrapper } from 'ssh2';
import type { SshSession } from './ssh-session';

export interface AgentBundle {
  /** The bundled agent (dist/agent/gpu-share-agent.cjs). */
  file: string;
  /** The app's assets folder; trainers/, launcher/ and corpus/ are copied. */
  assetsDir: string;
  /** Names the install folder: a new build gets a new folder. */
  version: string;
}

export const AGENT_FILE = 'gpu-share-agent.cjs';
const ASSET_FOLDERS = ['trainers', 'launcher', 'corpus'];

/** Single-quotes a value for sh. */
export function shQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export function agentDir(home: string, version: string): string {
  return path.posix.join(home, '.gpu-share', 'agent', version);
}

function call<T>(fn: (cb: (error: Error | null | undefined, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((error, value) => (error ? reject(error) : resolve(value as T))));
}

async function putTree(sftp: SFTPWrapper, local: string, remote: string): Promise<number> {
  let files = 0;
  await call<void>((cb) => sftp.mkdir(remote, { mode: 0o755 }, (e) => cb(e)));
  for (const entry of await readdir(local, { withFileTypes: true })) {
    if (entry.name === '__pycache__') continue;
    const from = path.join(local, entry.name);
    const to = path.posix.join(remote, entry.name);
    if (entry.isDirectory()) files += await putTree(sftp, from, to);
    else if (entry.isFile()) {
      await call<void>((cb) => sftp.fastPut(from, to, (e) => cb(e)));
      files += 1;
    }
  }
  return files;
}

/** Installs the agent unless this version is already complete there; returns its folder on the node. */
export async function installAgent(session: SshSession, home: string, bundle: AgentBundle, log: (line: string) => void): Promise<{ dir: string; installed: boolean }> {
  const dir = agentDir(home, bundle.version);
  const present = await session.exec(`test -f ${shQuote(path.posix.join(dir, AGENT_FILE))} && test -d ${shQuote(path.posix.join(dir, 'assets'))}`);
  if (present.code === 0) return { dir, installed: false };
  const size = (await stat(bundle.file)).size;
  log(`installing the worker agent ${bundle.version} (${(size / 1024 ** 2).toFixed(1)} MB) into ${dir}`);
  const tmp = `${dir}.partial-${process.pid}-${Date.now()}`;
  const made = await session.exec(`mkdir -p ${shQuote(path.posix.dirname(dir))} && rm -rf ${shQuote(tmp)} && mkdir -m 700 ${shQuote(tmp)}`);
  if (made.code !== 0) throw new Error(`cannot make ${tmp} on ${session.label}: ${made.stderr.trim()}`);
  const sftp = await session.sftp();
  try {
    await call<void>((cb) => sftp.fastPut(bundle.file, path.posix.join(tmp, AGENT_FILE), (e) => cb(e)));
    await call<void>((cb) => sftp.mkdir(path.posix.join(tmp, 'assets'), (e) => cb(e)));
    for (const folder of ASSET_FOLDERS) {
      const local = path.join(bundle.assetsDir, folder);
      if (await stat(local).then((s) => s.isDirectory(), () => false)) await putTree(sftp, local, path.posix.join(tmp, 'assets', folder));
    }
  } finally {
    sftp.end();
  }
  // Another start may have finished the same version meanwhile: then this copy is simply dropped.
  const moved = await session.exec(`if [ -d ${shQuote(dir)} ]; then rm -rf ${shQuote(tmp)}; else mv ${shQuote(tmp)} ${shQuote(dir)}; fi`);
  if (moved.code !== 0) throw new Error(`cannot move the agent into ${dir} on ${session.label}: ${moved.stderr.trim()}`);
  return { dir, installed: true };
}
