/**
 * The record `gpu-share worker install` keeps of what it did — every file and folder it made, the worker's name,
 * data folder and coordinator — so that status can report and uninstall can remove exactly that and nothing else.
 * It lives in the install's own folder (service-layout.ts), a path that depends only on platform and scope.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { writePrivateFileSync } from '../files/private-file';

export const manifestSchema = z.object({
  version: z.literal(1),
  platform: z.enum(['linux', 'darwin', 'win32']),
  scope: z.enum(['user', 'system']),
  node: z.string(),
  coordinator: z.string(),
  dataDir: z.string(),
  statusFile: z.string(),
  definitionFile: z.string(),
  tokenFile: z.string(),
  logFile: z.string().nullable(),
  /** Every file install wrote (the manifest itself included), removed by uninstall. */
  files: z.array(z.string()),
  /** Folders install made, outermost first: removed by uninstall when empty (the data folder keeps the node key). */
  dirs: z.array(z.string()),
  /** systemd user scope: install turned lingering on, so uninstall turns it off. */
  linger: z.boolean(),
  /** The command the service runs, for "start it by hand". */
  execLine: z.string(),
  installedAt: z.number(),
});
export type ServiceManifest = z.infer<typeof manifestSchema>;

export class ManifestError extends Error {}

/** The manifest, or null when there is none; a file that is not one is an error naming it. */
export function readManifest(file: string): ServiceManifest | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    const denied = ['EACCES', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '');
    throw new ManifestError(denied ? `cannot read ${file}: permission denied (a --system install's record is root's: run it with sudo)` : `cannot read ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ManifestError(`${file} is not JSON: remove it, and the files it listed, by hand`);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) throw new ManifestError(`${file} is not an install record this version understands: remove it by hand, then install again`);
  return parsed.data;
}

export function writeManifest(file: string, manifest: ServiceManifest): void {
  writePrivateFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`, 'the worker service record');
}
