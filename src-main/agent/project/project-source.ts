/**
 * Where an agent gets a snapshot's manifest and files: the coordinator, under the agent's join session (signed
 * like every other request), or the members that hold them with the coordinator behind (peer-source.ts).
 */
import { snapshotManifestSchema, type SnapshotManifest } from '../../../src-shared/projects/project-protocol';
import type { DownloadResult } from '../../platform/net/download-file';
import { describeFailure, type ApiReply, type CoordinatorClient } from '../coordinator-client';

export type ManifestResult = { ok: true; manifest: SnapshotManifest } | { ok: false; why: string };

/** A source that may count where its bytes came from (peer-source.ts) and hold sockets to close after use. */
export type FetchSource = ProjectSource & { summary?(): string; close?(): void };

export interface ProjectSource {
  /** For the log and the reports: "the coordinator". */
  readonly name: string;
  manifest(snapshot: string): Promise<ManifestResult>;
  /** Blob `sha256` (`size` bytes) of `snapshot` into `toFile`, checked as it streams. */
  blob(snapshot: string, sha256: string, size: number, toFile: string, onBytes: (received: number) => void): Promise<DownloadResult>;
  /** The order to fetch `files` in (default: as given). */
  arrange?<T>(files: readonly T[]): T[];
}

const MANIFEST_TIMEOUT_MS = 30_000;

/** The coordinator as a source, while the agent is joined (`joined()` null: not joined, every fetch fails). */
export function coordinatorSource(client: CoordinatorClient, joined: () => { workerId: number } | null): ProjectSource {
  return {
    name: 'the coordinator',
    async manifest(snapshot) {
      const session = joined();
      if (!session) return { ok: false, why: 'not joined to the coordinator' };
      const reply = await client.call('projectManifest', [session.workerId, snapshot], undefined, MANIFEST_TIMEOUT_MS);
      if (reply.kind !== 'ok') return { ok: false, why: describeFailure(reply) };
      const parsed = snapshotManifestSchema.safeParse(reply.body);
      if (!parsed.success) return { ok: false, why: `the coordinator's manifest of snapshot ${snapshot.slice(0, 12)}… is not a snapshot manifest (${parsed.error.issues[0]?.message ?? 'invalid'})` };
      return { ok: true, manifest: parsed.data };
    },
    async blob(snapshot, sha256, size, toFile, onBytes) {
      const session = joined();
      if (!session) return { kind: 'failed', error: new Error('not joined to the coordinator') };
      return client.download('projectBlob', [session.workerId, snapshot, sha256], toFile, { sha256, bytes: size }, onBytes);
    },
  };
}

/** The project calls of an agent under its current join session: the coordinator as source, and the result upload. */
export function projectTransport(client: CoordinatorClient, joined: () => { workerId: number } | null): { source: () => ProjectSource; upload: (runId: string, sha256: string, file: string, sizeBytes: number) => Promise<ApiReply> } {
  const source = coordinatorSource(client, joined);
  return {
    source: () => source,
    upload: async (runId, sha256, file, sizeBytes) => {
      const session = joined();
      if (!session) return { kind: 'network', message: 'not joined to the coordinator' };
      return client.upload('uploadRunArtifact', [session.workerId, runId, sha256], { file, sizeBytes, contentType: 'application/gzip', headers: {} });
    },
  };
}
