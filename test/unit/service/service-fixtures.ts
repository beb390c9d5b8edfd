/**
 * What the service tests share: a launch with awkward values (spaces, %, $, quotes), a fake command runner that
 * records what install / uninstall / status run and answers as a scripted service manager would, a listing of every
 * path under a folder (to see that uninstall leaves nothing behind), and a reader of systemd's ExecStart quoting.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { CommandResult, RunCommand } from '../../../src-main/platform/service/command-runner';
import type { WorkerLaunch } from '../../../src-main/platform/service/worker-launch';

export function sampleLaunch(over: Partial<WorkerLaunch> = {}): WorkerLaunch {
  return {
    executable: process.execPath,
    args: ['/opt/gpu share/cli.cjs', 'worker', '--join', 'https://192.168.1.20:7421', '--cert-sha256', 'AB:CD', '--name', 'box-1', '--data-dir', '/home/ann/GPU Share/workers/box 100% "$HOME"'],
    env: { GPU_SHARE_WORKER_STATUS_FILE: '/home/ann/GPU Share/workers/box-1/service-status.json', PATH: '/usr/local/bin:/usr/bin:/bin' },
    workingDir: '/tmp',
    tokenFile: '/home/ann/.config/GPU Share/service/worker.env',
    logFile: null,
    description: 'GPU Share worker box-1 (joins https://192.168.1.20:7421)',
    ...over,
  };
}

export interface FakeRunner {
  run: RunCommand;
  calls: string[];
}

/** Answers `answer(file, args)` (default: exit 0, no output) and records each call as one line. */
export function fakeRunner(answer: (file: string, args: readonly string[]) => Partial<CommandResult> = () => ({})): FakeRunner {
  const calls: string[] = [];
  return {
    calls,
    run: async (file, args) => {
      calls.push([file, ...args].join(' '));
      return { code: 0, stdout: '', stderr: '', ...answer(file, args) };
    },
  };
}

/** Every file and folder under `root`, relative, sorted. */
export function tree(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      out.push(path.relative(root, full) + (statSync(full).isDirectory() ? '/' : ''));
      if (statSync(full).isDirectory()) walk(full);
    }
  };
  walk(root);
  return out.sort();
}

export function hasProgram(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

/**
 * The words of an ExecStart= / Environment= value, unquoted as systemd does for the forms the generator writes:
 * double-quoted words with \\ and \" escapes, %% for %, $$ for $.
 */
export function systemdWords(value: string): string[] {
  const words: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (const m of value.matchAll(re)) {
    const raw = m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!;
    words.push(raw.replace(/%%/g, '%').replace(/\$\$/g, '$'));
  }
  return words;
}

/** The values of `key=` lines in a unit's text, in order. */
export function unitValues(unit: string, key: string): string[] {
  return unit.split('\n').filter((l) => l.startsWith(`${key}=`)).map((l) => l.slice(key.length + 1));
}
