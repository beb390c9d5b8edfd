/**
 * Which `transport: ssh` nodes the person started "and kept" (a worker service installed there over SSH), in
 * <userData>/ssh-kept-nodes.json: the node cards say so after a restart of the app, and Stop then asks whether
 * to uninstall. A missing or unreadable file means none; each change rewrites it whole (write, then rename).
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { KeptNodes } from '../core/ssh/node-launcher';

export const KEPT_NODES_FILE = 'ssh-kept-nodes.json';
const MAX_KEPT = 1000;

export function keptNodesFile(userData: string, onWarning: (message: string) => void = () => undefined): KeptNodes {
  const file = path.join(userData, KEPT_NODES_FILE);
  let names = read(file, onWarning);
  return {
    list: () => [...names],
    set(name, kept) {
      if (kept === names.includes(name)) return;
      names = kept ? [...names, name].slice(-MAX_KEPT) : names.filter((n) => n !== name);
      const tmp = `${file}.${process.pid}.tmp`;
      try {
        writeFileSync(tmp, `${JSON.stringify({ kept: names }, null, 2)}\n`, { mode: 0o600 });
        renameSync(tmp, file);
      } catch (error) {
        onWarning(`could not record the kept SSH nodes in ${file}: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  };
}

function read(file: string, onWarning: (message: string) => void): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  try {
    const value: unknown = JSON.parse(text);
    const kept = (value as { kept?: unknown } | null)?.kept;
    if (!Array.isArray(kept)) throw new Error('no "kept" list in it');
    return kept.filter((n): n is string => typeof n === 'string' && n.length > 0 && n.length <= 256).slice(0, MAX_KEPT);
  } catch (error) {
    onWarning(`${file} could not be read (${error instanceof Error ? error.message : String(error)}); no SSH node is shown as kept until you start one "and keep" again`);
    return [];
  }
}
