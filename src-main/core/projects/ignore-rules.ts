/**
 * Which paths of a project folder a snapshot leaves out, as git would: each folder's `.gitignore` applies to the
 * paths under it (a deeper file's rules, negations included, win over a shallower one's), `.gpushareignore` at the
 * root is read last (it can leave out anything, or bring back what a .gitignore left out), and `.git/` is always
 * left out. A folder left out is never entered, so nothing under it comes back (git's rule too).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { errnoCode } from '../../platform/files/errno';

export const GITIGNORE = '.gitignore';
export const GPUSHAREIGNORE = '.gpushareignore';
/** An ignore file bigger than this is not a list of patterns: it is refused, named. */
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

interface Level {
  /** The folder (relative to the root, "" for the root) the rules are relative to. */
  base: string;
  rules: Ignore;
}

/** The rules in force in one folder: its ancestors' and its own. Immutable: entering a folder makes a new one. */
export class IgnoreRules {
  private constructor(
    private readonly levels: readonly Level[],
    private readonly last: Ignore | null,
  ) {}

  /** The root's rules: its .gitignore and its .gpushareignore (read last, so it wins). */
  static async atRoot(root: string): Promise<IgnoreRules> {
    const git = await readRules(root, GITIGNORE);
    const own = await readRules(root, GPUSHAREIGNORE);
    return new IgnoreRules(git ? [{ base: '', rules: git }] : [], own);
  }

  /** The rules inside `rel` (a folder not left out): these plus its own .gitignore. */
  async enter(root: string, rel: string): Promise<IgnoreRules> {
    const rules = await readRules(path.join(root, rel), GITIGNORE);
    return rules ? new IgnoreRules([...this.levels, { base: rel, rules }], this.last) : this;
  }

  /** Whether `rel` (relative to the root, "/" separators) is left out; `dir`: it is a folder. */
  ignores(rel: string, dir: boolean): boolean {
    if (rel === '.git' || rel.endsWith('/.git')) return true;
    const tested = dir ? `${rel}/` : rel;
    let out = false;
    for (const level of this.levels) {
      const sub = level.base === '' ? tested : tested.slice(level.base.length + 1);
      out = decide(level.rules, sub, out);
    }
    return this.last ? decide(this.last, tested, out) : out;
  }
}

function decide(rules: Ignore, rel: string, before: boolean): boolean {
  const result = rules.test(rel);
  if (result.ignored) return true;
  if (result.unignored) return false;
  return before;
}

async function readRules(dir: string, name: string): Promise<Ignore | null> {
  const file = path.join(dir, name);
  let text: string;
  try {
    const stat = await fs.lstat(file);
    if (!stat.isFile()) return null;
    if (stat.size > MAX_IGNORE_FILE_BYTES) throw new Error(`${file} is ${stat.size} bytes, not a list of ignore patterns (at most 1 MiB): shorten it`);
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    if (errnoCode(error) === 'EACCES') throw new Error(`${file} cannot be read (permission denied): make it readable (chmod u+r ${file}) so its rules apply`);
    throw error;
  }
  return ignore().add(text);
}
