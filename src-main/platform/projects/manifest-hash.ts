/**
 * The one spelling of a snapshot manifest's hash (issue 23's contract): the coordinator names a snapshot by it and
 * an agent checks a fetched manifest against it, so both must compute it byte for byte the same way.
 */
import { createHash } from 'node:crypto';
import type { ProjectEntry, SnapshotManifest } from '../../../src-shared/projects/project-protocol';

/** An entry with its keys in the schema's order (extra keys dropped), so JSON.stringify is canonical. */
function canonicalEntry(entry: ProjectEntry): ProjectEntry {
  if (entry.kind === 'file') {
    return { kind: 'file', path: entry.path, sha256: entry.sha256, size: entry.size, executable: entry.executable };
  }
  return { kind: 'link', path: entry.path, target: entry.target };
}

/** Entries sorted by path with plain string comparison, as the manifest stores them. */
export function sortManifestEntries(entries: readonly ProjectEntry[]): ProjectEntry[] {
  return entries.map(canonicalEntry).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** sha256 (hex) of `JSON.stringify({version: 1, entries})`, entries sorted by path, keys in schema order. */
export function manifestHash(manifest: Pick<SnapshotManifest, 'entries'>): string {
  const canonical = JSON.stringify({ version: 1, entries: sortManifestEntries(manifest.entries) });
  return createHash('sha256').update(canonical).digest('hex');
}
