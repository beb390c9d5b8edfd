/** `gpu-share jobs artifacts`: the stored output tarballs and which job attempts produced them. */
import { noMorePositionals, parseCommandLine, type CliIo, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator, type OperatorValues } from '../../operator/operator-command';
import { formatArtifactsTable } from './job-format';

export const ARTIFACTS_JSON_USAGE = '{"artifacts": [ArtifactSnapshot, …]} as GET /v1/artifacts answers (docs/api.md)';

/** Lists the artifacts (also `jobs artifact --list`). */
export function listArtifacts(label: string, values: OperatorValues, io: CliIo): Promise<number> {
  return runOperator(label, values, io, async (client) => {
    const reply = await client.call('listArtifacts', [], undefined);
    if (values.json) printJson(io, reply);
    else io.out(formatArtifactsTable(reply.artifacts, Date.now()));
    return 0;
  });
}

export const jobsArtifactsCommand: Command = {
  name: 'artifacts',
  summary: 'the stored artifacts: sha256, size, which job attempts produced them',
  usage: `Usage: gpu-share jobs artifacts [--json]

Lists the artifacts the coordinator stores, newest first: sha256 (first 12 hex digits), size, when stored, and
every job attempt that produced exactly these bytes (identical outputs are stored once). Download one with
\`gpu-share jobs artifact JOB|SHA256\`.
--json prints ${ARTIFACTS_JSON_USAGE}.

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    noMorePositionals(positionals);
    return listArtifacts('gpu-share jobs artifacts', values, io);
  },
};
