/** `gpu-share jobs submit FILE`: send a job manifest; new jobs become pending, known ones keep their status. */
import path from 'node:path';
import { noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, runOperator } from '../../operator/operator-command';
import { submitManifestFile } from './manifest-submit';

export const MANIFEST_RESULT_USAGE = `Prints how many jobs were added (pending), kept (known already: they keep their status) and are no
longer in the manifest (they stay until cancelled). A manifest with errors changes nothing: every error is
printed as FILE:LINE:COL: message on stderr, exit 1.
--json prints the result as POST /v1/jobs/manifest answers: {"ok": true, "fileName", "added", "kept",
"missing"} or {"ok": false, "fileName", "errors": [{"message", "line", "col", "path"}, …]} (exit 1).`;

export const jobsSubmitCommand: Command = {
  name: 'submit',
  summary: 'send a job manifest (TOML, docs/jobs.md) to the queue',
  usage: `Usage: gpu-share jobs submit FILE [--json]

Sends the job manifest FILE (TOML; the format is in docs/jobs.md) to the coordinator's queue. A job's id comes
from what defines it (command, model, mode, hyper, seed), so submitting the same manifest again is harmless.
${MANIFEST_RESULT_USAGE}

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    const given = positionals[0];
    if (given === undefined) throw new UsageError('give the manifest to submit: gpu-share jobs submit FILE');
    noMorePositionals(positionals, 1);
    const file = { absolute: path.resolve(io.cwd, given), shown: given };
    return runOperator('gpu-share jobs submit', values, io, (client) => submitManifestFile(client, io, file, values.json === true));
  },
};
