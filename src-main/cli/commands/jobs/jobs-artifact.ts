/** `gpu-share jobs artifact JOB|SHA256 [-o PATH] | --delete`: download a job's output tarball, checked against its sha256, or delete it. */
import { SHA256_PATTERN } from '../../../../src-shared/jobs/job-protocol';
import { noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import type { OperatorClient } from '../../operator/operator-client';
import { EXIT, OperatorFailure } from '../../operator/operator-failure';
import { artifactTarget, defaultArtifactFileName, saveArtifact } from './artifact-download';
import { deleteArtifact } from './artifact-delete';
import { humanBytes, shortId } from './job-format';
import { allJobs } from './job-pages';
import { ARTIFACTS_JSON_USAGE, listArtifacts } from './jobs-artifacts';
import { JOB_ARGUMENT_USAGE, selectJob } from './job-select';

const ARTIFACTS_HINT = 'artifacts are listed by `gpu-share jobs artifacts`';

/** The artifact `given` names — a stored sha256, or a job (which must have completed) — and a name for its file. */
async function resolveArtifact(client: OperatorClient, given: string): Promise<{ sha256: string; jobName: string | null; job?: { id: string; name: string } }> {
  if (SHA256_PATTERN.test(given)) {
    const { artifacts } = await client.call('listArtifacts', [], undefined);
    const stored = artifacts.find((a) => a.sha256 === given);
    if (stored) return { sha256: stored.sha256, jobName: stored.producedBy.at(-1)?.jobName ?? null };
  }
  const job = selectJob(await allJobs(client), given);
  if (!job.artifact) {
    throw new OperatorFailure(`job ${shortId(job.id)} (${job.name}) has no artifact: it is ${job.status}, and a job stores one when it completes`, EXIT.notFound, 'not-found');
  }
  return { sha256: job.artifact, jobName: job.name, job: { id: job.id, name: job.name } };
}

export const jobsArtifactCommand: Command = {
  name: 'artifact',
  summary: "download a job's artifact (its output folder as a .tar.gz), checked against its sha256, or delete it",
  usage: `Usage: gpu-share jobs artifact JOB|SHA256 [-o PATH] [--force] [--json]
       gpu-share jobs artifact JOB|SHA256 --delete [--json]
       gpu-share jobs artifact --list [--json]

Downloads the artifact of a completed job — its GPU_SHARE_OUTPUT_DIR as a reproducible .tar.gz — or the
stored artifact with that SHA256. It is streamed to PATH (default ./<job name>-<first 12 hex>.tar.gz; a
folder gets that name inside it), its sha256 is checked, and only then is it put in place: a mismatch keeps
nothing and exits 1. The coordinator refuses a stored tarball that is not safe to unpack (one kept before it
inspected uploads), naming the member: nothing is kept, exit 1. Prints the path and size.
${JOB_ARGUMENT_USAGE}

Options:
  -o, --output PATH  where to save it
  --force            replace PATH if it exists (else that is refused, exit 1)
  --list             list the artifacts instead, as \`gpu-share jobs artifacts\` does
  --delete           delete it instead: given a JOB, that job's claim on the artifact (the bytes go once no
                     other job attempt or run produced them too); given a SHA256, the artifact itself. Refused
                     (exit 1) while a job that produced it runs again or it is being uploaded or downloaded
  --json             {"path", "sha256", "sizeBytes"}; with --list ${ARTIFACTS_JSON_USAGE};
                     with --delete {"sha256", "removed", "freedBytes", "stillUsedBy"}

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const options = { ...operatorOptions, output: { type: 'string', short: 'o' }, force: { type: 'boolean' }, list: { type: 'boolean' }, delete: { type: 'boolean' } } as const;
    const { values, positionals } = parseCommandLine(args, options);
    if (values.delete && (values.list || values.output !== undefined || values.force)) throw new UsageError('--delete deletes the artifact; -o, --force and --list are for downloading or listing');
    if (values.list) {
      noMorePositionals(positionals, 0, ' (--list takes no JOB)');
      if (values.output !== undefined || values.force) throw new UsageError('--list prints the artifacts; -o and --force are for downloading one');
      return listArtifacts('gpu-share jobs artifact', values, io);
    }
    const given = positionals[0];
    if (given === undefined) throw new UsageError(`give the job or artifact sha256 to download (${ARTIFACTS_HINT}), or --list`);
    noMorePositionals(positionals, 1);
    return runOperator('gpu-share jobs artifact', values, io, async (client) => {
      const { sha256, jobName, job } = await resolveArtifact(client, given);
      if (values.delete) return deleteArtifact(client, io, values.json, sha256, job ? `job ${job.name}` : `made by ${jobName ?? 'a run'}`, job);
      const { target, shown } = await artifactTarget(io.cwd, values.output, defaultArtifactFileName(jobName, sha256));
      const saved = await saveArtifact(client, sha256, target, shown, values.force === true, `artifact ${shortId(sha256)} is not stored on this coordinator; ${ARTIFACTS_HINT}`);
      if (values.json) printJson(io, saved);
      else io.out(`Saved ${shown} (${humanBytes(saved.sizeBytes)}, sha256 ${sha256} checked)\n`);
      return 0;
    });
  },
};
