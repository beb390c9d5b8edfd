/** `gpu-share jobs artifacts`: the stored output tarballs, which job attempts produced them, and the retention rule (which it also sets). */
import { describeRetention, type ArtifactHousekeeping, type ArtifactRetention } from '../../../../src-shared/jobs/artifact-retention';
import { noMorePositionals, parseCommandLine, UsageError, type CliIo, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator, type OperatorValues } from '../../operator/operator-command';
import { formatArtifactsTable, humanBytes, shortId } from './job-format';

export const ARTIFACTS_JSON_USAGE = '{"artifacts": [ArtifactSnapshot, …], "housekeeping": {"retention", "count", "totalBytes"}} as GET /v1/artifacts answers (docs/api.md)';

/** "Retention: keep the newest 5 (3 artifacts, 1.2 MiB kept)". */
export function retentionLine(h: ArtifactHousekeeping): string {
  return `Retention: ${describeRetention(h.retention)} (${h.count} artifact${h.count === 1 ? '' : 's'}, ${humanBytes(h.totalBytes)} kept)\n`;
}

/** Lists the artifacts (also `jobs artifact --list`). */
export function listArtifacts(label: string, values: OperatorValues, io: CliIo): Promise<number> {
  return runOperator(label, values, io, async (client) => {
    const reply = await client.call('listArtifacts', [], undefined);
    if (values.json) printJson(io, reply);
    else io.out(formatArtifactsTable(reply.artifacts, Date.now()) + (reply.housekeeping ? retentionLine(reply.housekeeping) : ''));
    return 0;
  });
}

/** A limit from the command line: a positive number, or "off" for none (null); undefined when not given. */
function limitArg(flag: string, raw: string | undefined, whole: boolean): number | null | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'off') return null;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (whole && !Number.isInteger(n))) throw new UsageError(`${flag} takes ${whole ? 'a whole number of artifacts' : 'a number of GB'} above 0, or "off" (got "${raw}")`);
  return n;
}

async function setRetention(values: OperatorValues, io: CliIo, change: Partial<ArtifactRetention>): Promise<number> {
  return runOperator('gpu-share jobs artifacts', values, io, async (client) => {
    const current = (await client.call('listArtifacts', [], undefined)).housekeeping?.retention ?? { keepLast: null, maxTotalGb: null };
    const result = await client.call('setArtifactRetention', [], { ...current, ...change });
    if (values.json) printJson(io, result);
    else {
      io.out(`Retention set: ${describeRetention(result.retention)}.\n`);
      for (const r of result.removed) io.out(`Removed ${shortId(r.sha256)} (${humanBytes(r.sizeBytes)}): ${r.why}\n`);
      if (result.removed.length === 0) io.out('Nothing was over it.\n');
    }
    return 0;
  });
}

export const jobsArtifactsCommand: Command = {
  name: 'artifacts',
  summary: 'the stored artifacts (sha256, size, which job attempts produced them) and the retention rule',
  usage: `Usage: gpu-share jobs artifacts [--json]
       gpu-share jobs artifacts [--keep-last N|off] [--max-total-gb X|off] [--json]

Lists the artifacts the coordinator stores, newest first: sha256 (first 12 hex digits), size, when stored, and
every job attempt that produced exactly these bytes (identical outputs are stored once), then the retention
rule and what is kept under it. Download one with \`gpu-share jobs artifact JOB|SHA256\`, delete one with
\`gpu-share jobs artifact JOB|SHA256 --delete\`.
--json prints ${ARTIFACTS_JSON_USAGE}.

Retention (kept in the coordinator's state.db; enforced at once, after every stored output and at start,
oldest first, never an artifact whose job runs again or that is being uploaded or downloaded; each removal
is an event):
  --keep-last N|off     keep only the newest N artifacts
  --max-total-gb X|off  keep at most X GB (10^9 bytes) of artifacts
With either, --json prints {"retention", "removed": [{"sha256", "sizeBytes", "why"}]}.

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const options = { ...operatorOptions, 'keep-last': { type: 'string' }, 'max-total-gb': { type: 'string' } } as const;
    const { values, positionals } = parseCommandLine(args, options);
    noMorePositionals(positionals);
    const keepLast = limitArg('--keep-last', values['keep-last'], true);
    const maxTotalGb = limitArg('--max-total-gb', values['max-total-gb'], false);
    if (keepLast === undefined && maxTotalGb === undefined) return listArtifacts('gpu-share jobs artifacts', values, io);
    return setRetention(values, io, { ...(keepLast !== undefined ? { keepLast } : {}), ...(maxTotalGb !== undefined ? { maxTotalGb } : {}) });
  },
};
