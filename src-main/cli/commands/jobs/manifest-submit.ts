/**
 * What `jobs submit` and `jobs reload` share: read the manifest (a regular file only, at most the API's 4 MiB
 * of UTF-8), send its absolute path and text, and print what changed — or every error at FILE:LINE:COL, with
 * exit 1, the coordinator having changed nothing.
 */
import { readRegularFile, type FileReadFailure } from '../../../platform/files/safe-read';
import { UsageError, type CliIo } from '../../command';
import { printJson } from '../../operator/operator-command';
import type { OperatorClient } from '../../operator/operator-client';
import { formatManifestResult } from './job-format';

/** The API's cap on a manifest's text (manifestSubmitSchema). */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

export interface ManifestFile {
  /** What is sent as the file name, and what `jobs reload` reads again. */
  absolute: string;
  /** The path as the person typed it, for messages. */
  shown: string;
}

/** safe-read's sentence for the kinds it words generally; its own words for the others name a cluster.yaml. */
function readFailureMessage(failure: FileReadFailure, file: ManifestFile): string {
  switch (failure.kind) {
    case 'missing':
      return `${file.shown} does not exist; check the path (the manifest format, with an example, is in docs/jobs.md)`;
    case 'directory':
      return `${file.shown} is a folder; give the manifest file (a .toml) inside it`;
    case 'not-regular':
      return `${file.shown} is not a regular file (a pipe, socket or device), so it was not read; give the path of a manifest file`;
    default:
      return failure.message.replace(file.absolute, file.shown);
  }
}

/** The manifest's text; a file that cannot be one is a usage error naming it. */
export async function readManifestText(file: ManifestFile): Promise<string> {
  const read = await readRegularFile(file.absolute, { maxBytes: MAX_MANIFEST_BYTES, limitText: '4 MiB', expectation: 'a job manifest is a few KB of TOML' });
  if (!read.ok) throw new UsageError(readFailureMessage(read.failure, file));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(read.bytes);
  } catch {
    throw new UsageError(`${file.shown} is not UTF-8 text; a job manifest is a TOML file (docs/jobs.md)`);
  }
}

/** Reads and submits `file`; prints the result; 0 when the manifest was taken, 1 when it was refused. */
export async function submitManifestFile(client: OperatorClient, io: CliIo, file: ManifestFile, json: boolean): Promise<number> {
  const text = await readManifestText(file);
  const result = await client.call('submitManifest', [], { fileName: file.absolute, text });
  if (json) printJson(io, result);
  else if (result.ok) io.out(formatManifestResult(result, file.shown));
  else io.err(`${formatManifestResult(result, file.shown)}${result.errors.length} error${result.errors.length === 1 ? '' : 's'}; nothing was changed. Fix ${file.shown} and submit it again.\n`);
  return result.ok ? 0 : 1;
}
