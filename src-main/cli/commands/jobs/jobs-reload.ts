/** `gpu-share jobs reload [FILE]`: submit the manifest again (by default the one submitted last, read anew). */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, runOperator } from '../../operator/operator-command';
import type { OperatorClient } from '../../operator/operator-client';
import { MANIFEST_RESULT_USAGE } from './jobs-submit';
import { submitManifestFile, type ManifestFile } from './manifest-submit';

/** The manifest submitted last, when it is a file this machine can read; else a usage error saying to name one. */
async function lastManifest(client: OperatorClient): Promise<ManifestFile> {
  const { manifestName } = await client.call('jobsState', [], undefined);
  const giveIt = 'give the manifest: gpu-share jobs reload FILE';
  if (manifestName === null) throw new UsageError(`no manifest has been submitted to this coordinator yet; ${giveIt}`);
  if (!path.isAbsolute(manifestName)) {
    throw new UsageError(`the manifest submitted last, "${manifestName}", is not a path on this machine (it was sent from elsewhere); ${giveIt}`);
  }
  const readable = await access(manifestName, constants.R_OK).then(
    () => true,
    () => false,
  );
  if (!readable) throw new UsageError(`the manifest submitted last, ${manifestName}, cannot be read on this machine; ${giveIt}`);
  return { absolute: manifestName, shown: manifestName };
}

export const jobsReloadCommand: Command = {
  name: 'reload',
  summary: 'submit the manifest again after editing it (by default the last one submitted)',
  usage: `Usage: gpu-share jobs reload [FILE] [--json]

Reads the manifest again and submits it: new jobs become pending, jobs it still lists keep their status, and
jobs it no longer lists stay until cancelled. Without FILE: the manifest submitted last, when it is a file on
this machine.
${MANIFEST_RESULT_USAGE}

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    noMorePositionals(positionals, 1);
    const given = positionals[0];
    return runOperator('gpu-share jobs reload', values, io, async (client) => {
      const file = given === undefined ? await lastManifest(client) : { absolute: path.resolve(io.cwd, given), shown: given };
      return submitManifestFile(client, io, file, values.json === true);
    });
  },
};
