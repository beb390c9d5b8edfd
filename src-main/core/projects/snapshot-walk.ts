/**
 * Walks a project folder on the coordinator's machine into what a snapshot holds: its regular files (to be
 * hashed and copied) and its links that stay inside the folder, in path order, with the ignore rules applied
 * (ignore-rules.ts). A link that leads outside is never followed; FIFOs, devices and sockets are no files to
 * ship: both are left out with a warning naming them. Over the limits, the refusal names the biggest paths and
 * how to leave them out. Unreadable folders and files are one error naming them. All fs work is asynchronous.
 */
import fs from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import path from 'node:path';
import { PROJECT_LIMITS } from '../../../src-shared/projects/project-protocol';
import { ApiProblem } from '../coordinator/common';
import { errnoCode } from '../../platform/files/errno';
import { GPUSHAREIGNORE, IgnoreRules } from './ignore-rules';

export interface ProjectLimits {
  maxBytes: number;
  maxFiles: number;
}

export interface WalkedFile {
  kind: 'file';
  path: string;
  size: number;
  executable: boolean;
}
export interface WalkedLink {
  kind: 'link';
  path: string;
  target: string;
}

export interface ProjectWalk {
  /** Sorted by path (plain string comparison). */
  entries: (WalkedFile | WalkedLink)[];
  files: number;
  bytes: number;
  /** For a person: what was left out that they may not expect. */
  warnings: string[];
}

/** A refusal of the folder as a whole (status 400: the request names a folder that cannot be shipped). */
function refuse(message: string): ApiProblem {
  return new ApiProblem(400, message);
}

function mib(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

/** Walks `root` (absolute, a folder). Throws ApiProblem 400 over the limits or for unreadable paths. */
export async function walkProject(root: string, limits: ProjectLimits = PROJECT_LIMITS): Promise<ProjectWalk> {
  const realRoot = await fs.realpath(root);
  const walk: ProjectWalk = { entries: [], files: 0, bytes: 0, warnings: [] };
  const unreadable: string[] = [];
  const stack: { rel: string; rules: IgnoreRules }[] = [{ rel: '', rules: await IgnoreRules.atRoot(root) }];
  while (stack.length > 0) {
    const { rel, rules } = stack.pop()!;
    let dirents: Dirent[];
    try {
      dirents = await fs.readdir(path.join(root, rel), { withFileTypes: true });
    } catch (error) {
      if (errnoCode(error) !== 'EACCES') throw error;
      unreadable.push(`${rel || '.'}/`);
      continue;
    }
    for (const d of dirents) {
      const childRel = rel === '' ? d.name : `${rel}/${d.name}`;
      if (d.isDirectory()) {
        if (rules.ignores(childRel, true)) continue;
        stack.push({ rel: childRel, rules: await rules.enter(root, childRel) });
        continue;
      }
      if (rules.ignores(childRel, false)) continue;
      const abs = path.join(root, childRel);
      if (d.isSymbolicLink()) {
        const link = await linkEntry(realRoot, root, childRel);
        if (typeof link === 'string') walk.warnings.push(link);
        else walk.entries.push(link);
      } else if (d.isFile()) {
        const stat = await fs.lstat(abs);
        walk.entries.push({ kind: 'file', path: childRel, size: stat.size, executable: (stat.mode & 0o111) !== 0 });
        walk.files += 1;
        walk.bytes += stat.size;
      } else {
        walk.warnings.push(`${childRel} left out: it is a ${specialKind(d)}, not a regular file`);
      }
    }
  }
  if (unreadable.length > 0) throw unreadableError(root, unreadable);
  walk.entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  checkLimits(root, walk, limits);
  return walk;
}

function specialKind(d: Dirent): string {
  if (d.isFIFO()) return 'FIFO (named pipe)';
  if (d.isSocket()) return 'socket';
  if (d.isCharacterDevice() || d.isBlockDevice()) return 'device';
  return 'special file';
}

/** A link inside the folder as an entry (target relative to its own folder), or the warning for one that leads outside. */
async function linkEntry(realRoot: string, root: string, rel: string): Promise<WalkedLink | string> {
  const abs = path.join(root, rel);
  const target = await fs.readlink(abs);
  const lexical = path.resolve(path.dirname(abs), target);
  const outside = (p: string, base: string): boolean => {
    const r = path.relative(base, p);
    return r === '' || r.startsWith('..') || path.isAbsolute(r);
  };
  // Both the written target and where it really leads (through other links) must stay inside the folder.
  let real: string | null = null;
  try {
    real = await fs.realpath(abs);
  } catch {
    real = null; // dangling: judged by what it says
  }
  if (outside(lexical, root) || (real !== null && outside(real, realRoot))) {
    return `${rel} left out: it is a symbolic link to ${target}, outside the project folder (links out of the folder are never followed; copy what it points at into the folder if the run needs it)`;
  }
  const relative = path.relative(path.dirname(abs), lexical).split(path.sep).join('/');
  return { kind: 'link', path: rel, target: relative === '' ? '.' : relative };
}

function unreadableError(root: string, paths: string[]): ApiProblem {
  const shown = paths.slice(0, 10).join(', ');
  const more = paths.length > 10 ? ` and ${paths.length - 10} more` : '';
  return refuse(`the project folder ${root} has paths GPU Share cannot read: ${shown}${more}. Make them readable (chmod u+r), or leave them out in ${path.join(root, GPUSHAREIGNORE)}`);
}

/** Over the limits: the refusal names the biggest top-level paths and files, and the ignore file. */
function checkLimits(root: string, walk: ProjectWalk, limits: ProjectLimits): void {
  if (walk.bytes <= limits.maxBytes && walk.files <= limits.maxFiles) return;
  const tops = new Map<string, { bytes: number; files: number; dir: boolean }>();
  for (const e of walk.entries) {
    if (e.kind !== 'file') continue;
    const slash = e.path.indexOf('/');
    const top = slash === -1 ? e.path : e.path.slice(0, slash);
    const t = tops.get(top) ?? { bytes: 0, files: 0, dir: slash !== -1 };
    t.bytes += e.size;
    t.files += 1;
    tops.set(top, t);
  }
  const byFiles = walk.files > limits.maxFiles;
  const biggest = [...tops.entries()]
    .sort((a, b) => (byFiles ? b[1].files - a[1].files : b[1].bytes - a[1].bytes))
    .slice(0, 5)
    .map(([name, t]) => `${name}${t.dir ? '/' : ''} (${mib(t.bytes)}${t.dir ? `, ${t.files} files` : ''})`);
  const over = byFiles ? `${walk.files} files, over the limit of ${limits.maxFiles}` : `${mib(walk.bytes)}, over the limit of ${mib(limits.maxBytes)}`;
  const example = biggest[0]?.split(' (')[0] ?? 'checkpoints/';
  throw refuse(
    `the project folder ${root} holds ${over} (${walk.files} files, ${mib(walk.bytes)} after .gitignore). Biggest: ${biggest.join(', ')}. ` +
      `Leave out what the run does not need with a line such as "${example}" in ${path.join(root, GPUSHAREIGNORE)} (gitignore syntax), or raise the limit`,
  );
}
