/** `gpu-share runs artifact [ID] [-o PATH] | --delete`: download what a run's rank 0 wrote (its output tarball), checked against its sha256, or delete it. */
import { noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { EXIT, OperatorFailure } from '../../operator/operator-failure';
import { artifactTarget, saveArtifact } from '../jobs/artifact-download';
import { deleteArtifact } from '../jobs/artifact-delete';
import { humanBytes } from '../jobs/job-format';
import { fetchRun, pickRunId } from './run-select';

/** run-<id>-<first 12 hex>.tar.gz, with anything but letters, digits, '.', '_' and '-' in the id made '_'. */
export function runArtifactFileName(runId: string, sha256: string): string {
  return `run-${runId.replace(/[^\w.-]+/g, '_').slice(0, 100)}-${sha256.slice(0, 12)}.tar.gz`;
}

export const runsArtifactCommand: Command = {
  name: 'artifact',
  summary: "download a run's output (what rank 0 wrote to GPU_SHARE_OUTPUT_DIR) as a .tar.gz",
  usage: `Usage: gpu-share runs artifact [ID] [-o PATH] [--force] [--json]
       gpu-share runs artifact ID --delete [--json]

Downloads the run's output: what global rank 0 wrote to GPU_SHARE_OUTPUT_DIR, packed as a reproducible
.tar.gz when the run ended (a stopped or failed run's is marked partial). It is streamed to PATH (default
./run-<id>-<first 12 hex>.tar.gz; a folder gets that name inside it), its sha256 is checked, and only then is
it put in place: a mismatch keeps nothing and exits 1. A run with no output yet exits ${EXIT.notFound}.
Without ID: the newest live run, or else the newest.

Options:
  -o, --output PATH  where to save it
  --force            replace PATH if it exists (else that is refused, exit 1)
  --delete           delete the run's output from the coordinator's artifact store instead (refused, exit 1,
                     while it is being downloaded)
  --json             {"path", "sha256", "sizeBytes", "partial"}; with --delete {"sha256", "removed",
                     "freedBytes", "stillUsedBy"}

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const options = { ...operatorOptions, output: { type: 'string', short: 'o' }, force: { type: 'boolean' }, delete: { type: 'boolean' } } as const;
    const { values, positionals } = parseCommandLine(args, options);
    noMorePositionals(positionals, 1);
    if (values.delete && positionals[0] === undefined) throw new UsageError('--delete needs the run ID (gpu-share runs list), so the wrong run\'s output is never deleted');
    if (values.delete && (values.output !== undefined || values.force)) throw new UsageError('--delete deletes the output; -o and --force are for downloading it');
    return runOperator('gpu-share runs artifact', values, io, async (client) => {
      const run = await fetchRun(client, await pickRunId(client, positionals[0], false));
      const artifact = run.artifact;
      if (!artifact) {
        const why = ['waiting', 'running', 'paused'].includes(run.state)
          ? `it is ${run.state}; a member uploads what rank 0 wrote to GPU_SHARE_OUTPUT_DIR when the run ends`
          : `it ${run.state} and no member uploaded any (rank 0 wrote nothing to GPU_SHARE_OUTPUT_DIR, or its upload failed: see gpu-share runs logs ${run.id})`;
        throw new OperatorFailure(`run ${run.id} (${run.spec.name}) has no output: ${why}`, EXIT.notFound, 'not-found');
      }
      if (values.delete) return deleteArtifact(client, io, values.json, artifact.sha256, `run ${run.id}`);
      const { target, shown } = await artifactTarget(io.cwd, values.output, runArtifactFileName(run.id, artifact.sha256));
      const notFound = `run ${run.id}'s output is no longer stored on this coordinator`;
      const saved = await saveArtifact(client, artifact.sha256, target, shown, values.force === true, notFound, { runId: run.id });
      if (values.json) printJson(io, { ...saved, partial: artifact.partial });
      else io.out(`Saved ${shown} (${humanBytes(saved.sizeBytes)}, sha256 ${artifact.sha256} checked${artifact.partial ? '; partial: the run did not finish' : ''})\n`);
      return 0;
    });
  },
};
