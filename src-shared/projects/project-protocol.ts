/**
 * A user's project as it travels: the snapshot manifest (content-addressed files and in-folder links), what a run
 * asks a member to get ready before it trains (`prepare`), what the member answers (`prepared`), and what a
 * member's launch plan says about the project and its data. Declared once here so the coordinator that writes
 * them and the agent that must not trust them read the same rules (docs/api.md, "Your own project").
 */
import { z } from 'zod';
import { preparePeerFields } from './peer-sources';
/** As worker-protocol's FIELD_CAPS.id (importing it from there would make a circle). */
const FIELD_CAPS_ID = 200;

/** A path inside a project: POSIX separators, relative, no empty, "." or ".." segment, no NUL. */
export const PROJECT_PATH_PATTERN = /^(?!\/)(?!.*\/\/)(?!.*(?:^|\/)\.{1,2}(?:\/|$))[^\0\\]{1,4096}$/;
export const projectPathSchema = z.string().regex(PROJECT_PATH_PATTERN, 'a project path is relative, with "/" separators and no "." or ".." segment');

export const SHA256_HEX_PATTERN = /^[0-9a-f]{64}$/;
export const sha256HexSchema = z.string().regex(SHA256_HEX_PATTERN, 'a sha256 is 64 lower-case hex digits');

export const projectFileEntrySchema = z.object({
  kind: z.literal('file'),
  path: projectPathSchema,
  sha256: sha256HexSchema,
  size: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  executable: z.boolean(),
});
/** A link inside the folder stays a link; `target` is relative to the link's own folder and stays inside. */
export const projectLinkEntrySchema = z.object({
  kind: z.literal('link'),
  path: projectPathSchema,
  target: z.string().min(1).max(4096),
});
export const projectEntrySchema = z.discriminatedUnion('kind', [projectFileEntrySchema, projectLinkEntrySchema]);
export type ProjectFileEntry = z.infer<typeof projectFileEntrySchema>;
export type ProjectLinkEntry = z.infer<typeof projectLinkEntrySchema>;
export type ProjectEntry = z.infer<typeof projectEntrySchema>;

/** Entries sorted by path (byte order); the snapshot's hash is the sha256 of this object's canonical JSON. */
export const snapshotManifestSchema = z.object({
  version: z.literal(1),
  entries: z.array(projectEntrySchema).max(50_000),
});
export type SnapshotManifest = z.infer<typeof snapshotManifestSchema>;

export const DATA_MODES = ['replicate', 'shard'] as const;
export type DataMode = (typeof DATA_MODES)[number];

/** A module a member's Python must import, and where the demand came from ("requirements.txt line 3", "--python-check"). */
export const pythonModuleCheckSchema = z.object({
  module: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/).max(200),
  source: z.string().max(200),
});
export type PythonModuleCheck = z.infer<typeof pythonModuleCheckSchema>;

/**
 * Instruction: have this snapshot (less the data folder in shard mode) unpacked and the modules importable before
 * the run may place you. The agent answers with a `prepared` report; it may be sent again (idempotent).
 */
export const prepareProjectInstructionSchema = z.object({
  kind: z.literal('prepare'),
  runId: z.string().max(FIELD_CAPS_ID),
  snapshot: sha256HexSchema,
  /** The data folder inside the project (shard mode: its files are fetched per generation, not here); null: none. */
  dataDir: projectPathSchema.nullable(),
  dataMode: z.enum(DATA_MODES),
  modules: z.array(pythonModuleCheckSchema).max(256),
  ...preparePeerFields,
});
export type PrepareProjectInstruction = z.infer<typeof prepareProjectInstructionSchema>;

/**
 * Serve a snapshot this agent holds in its cache (it advertised it, or one sharing files with it, in a heartbeat's
 * `snapshots`) to the members that prove `peerKey`: the coordinator named it as a peer of a new run's or job's
 * fetcher. Sent only to agents that advertise (older ones never get it).
 */
export const serveSnapshotInstructionSchema = z.object({
  kind: z.literal('serveSnapshot'),
  snapshot: sha256HexSchema,
  peerKey: preparePeerFields.peerKey.unwrap(),
  /** Its cache holds another snapshot that shares these files with `snapshot`: it serves these (those it holds) and no others. */
  blobs: z.array(sha256HexSchema).max(2048).optional(),
});
export type ServeSnapshotInstruction = z.infer<typeof serveSnapshotInstructionSchema>;

/** Snapshots an agent advertises as held in its cache with each heartbeat, at most (the most recently used). */
export const MAX_HELD_SNAPSHOTS = 16;
/** A heartbeat's `snapshots`: what its cache holds, newest first (older agents leave it out). */
export const heldSnapshotsSchema = z.array(sha256HexSchema).max(MAX_HELD_SNAPSHOTS);

/** Report: where a member stands with a run's project. `failed` holds it out of the run with `detail` as the reason. */
export const preparedReportSchema = z.object({
  type: z.literal('prepared'),
  runId: z.string().max(FIELD_CAPS_ID),
  snapshot: sha256HexSchema,
  status: z.enum(['fetching', 'ready', 'failed']),
  /** For a person: "fetched 12 files (3.1 MiB) from the coordinator", "python cannot import 'sentencepiece' (requirements.txt line 3)". */
  detail: z.string().max(2000),
  bytesDone: z.number().int().nonnegative().optional(),
  bytesTotal: z.number().int().nonnegative().optional(),
});
export type PreparedReport = z.infer<typeof preparedReportSchema>;

/** A launch plan's project: the trainer's working directory is the snapshot's folder. */
export const launchProjectSchema = z.object({
  snapshot: sha256HexSchema,
  dataDir: projectPathSchema.nullable(),
  dataMode: z.enum(DATA_MODES),
  /** Shard mode: this member's files, relative to dataDir (the agent fetches those it lacks before it launches). Replicate: null. */
  dataFiles: z.array(projectPathSchema).max(50_000).nullable(),
});
export type LaunchProject = z.infer<typeof launchProjectSchema>;

/** What a run's trainer is told (docs/api.md): the folder with its data files, their names (JSON), where rank 0 writes its result. */
export const PROJECT_ENV = {
  dataDir: 'GPU_SHARE_DATA_DIR',
  dataFiles: 'GPU_SHARE_DATA_FILES',
  /** A JSON file holding the same array: always set, and the only one set when the list is too long for a variable. */
  dataFilesPath: 'GPU_SHARE_DATA_FILES_PATH',
  outputDir: 'GPU_SHARE_OUTPUT_DIR',
  snapshot: 'GPU_SHARE_SNAPSHOT',
} as const;

/**
 * Python run in an unpacked snapshot writes no __pycache__ there: as root it could (permissions do not stop root),
 * and the folder is shared by every run and job of that snapshot, checked against its manifest.
 */
export const SNAPSHOT_PYTHON_ENV = { PYTHONDONTWRITEBYTECODE: '1' } as const;

/**
 * The longest GPU_SHARE_DATA_FILES value put in the environment. Linux refuses to start a process with any one
 * variable over 128 KiB (MAX_ARG_STRLEN), and 50,000 names are far more: past this the list is only in the file.
 */
export const DATA_FILES_ENV_MAX = 96 * 1024;

/** Default bounds of one snapshot; a refusal names the biggest paths and how to leave them out. */
export const PROJECT_LIMITS = { maxBytes: 512 * 1024 * 1024, maxFiles: 50_000 } as const;

/** A run's project fields (RunSpec, POST /v1/runs): spread into runSpecSchema. */
export const runProjectSpecFields = {
  /**
   * The project folder, an absolute path on the coordinator's machine: snapshotted at start and shipped to every
   * member; the command's script is relative to it. Left out: the command runs as given on each worker.
   */
  project: z.string().min(1).max(4096).optional(),
  /** The data folder inside the project (with `project`). */
  data: projectPathSchema.optional(),
  /** replicate (default): every member gets all of `data`; shard: its files are split over the members by the shard map. */
  dataMode: z.enum(DATA_MODES).optional(),
  /** Modules every member's Python must import before it is placed (besides the project's requirements.txt). */
  pythonCheck: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_.]*$/).max(200)).max(64).optional(),
};
