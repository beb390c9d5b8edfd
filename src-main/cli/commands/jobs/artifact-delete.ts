/**
 * `--delete` of `gpu-share jobs artifact` and `gpu-share runs artifact`: one call (POST /v1/artifacts/{sha}/delete)
 * and one sentence that says whether the bytes went or stay because another job attempt or run made them too.
 */
import type { CliIo } from '../../command';
import { printJson } from '../../operator/operator-command';
import type { OperatorClient } from '../../operator/operator-client';
import { humanBytes, shortId } from './job-format';

/** Deletes the artifact (with `job`, only that job's claim on it) and prints what happened. */
export async function deleteArtifact(client: OperatorClient, io: CliIo, json: boolean | undefined, sha256: string, what: string, job?: { id: string; name: string }): Promise<number> {
  const result = await client.call('deleteArtifact', [sha256], job ? { jobId: job.id } : {}, `artifact ${shortId(sha256)} is not stored on this coordinator (deleted already?); artifacts are listed by \`gpu-share jobs artifacts\``);
  if (json) printJson(io, result);
  else if (result.removed) io.out(`Deleted artifact ${shortId(sha256)} (${what}): ${humanBytes(result.freedBytes)} freed.\n`);
  else io.out(`Deleted ${what}'s artifact ${shortId(sha256)}; its bytes stay: ${result.stillUsedBy} other job attempt(s) or run(s) produced them too.\n`);
  return 0;
}
