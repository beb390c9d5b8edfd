/**
 * `gpu-share runs tag ID TAG…` (`--remove` takes them off) and `gpu-share runs note ID TEXT`: the person's tags and
 * note on a run, kept by the coordinator across restarts and shown in the Runs view (search, filter, compare).
 * Tags and note are checked here first, with the coordinator's own words (src-shared/runs/run-labels.ts).
 */
import { MAX_NOTE_CHARS, MAX_TAG_CHARS, MAX_TAGS, noteProblem, tagProblem, type RunLabelChange } from '../../../../src-shared/runs/run-labels';
import type { RunSnapshot } from '../../../../src-shared/training';
import { noMorePositionals, parseCommandLine, UsageError, type CliIo, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator, type OperatorValues } from '../../operator/operator-command';
import { fetchRun } from './run-select';

const LIMITS = `A run has at most ${MAX_TAGS} tags of at most ${MAX_TAG_CHARS} characters each (letters, digits, ".", "_", "-"),
and a note of at most ${MAX_NOTE_CHARS} characters.`;

function labelled(run: RunSnapshot): string {
  const tags = run.tags?.length ? run.tags.join(', ') : 'none';
  return `Run ${run.id} (${run.spec.name}): tags ${tags}${run.note ? `; note: ${run.note}` : ''}\n`;
}

async function sendChange(label: string, values: OperatorValues, io: CliIo, runId: string, change: RunLabelChange): Promise<number> {
  return runOperator(label, values, io, async (client) => {
    const run = await fetchRun(client, runId);
    const after = await client.call('labelRun', [run.id], change);
    if (values.json) printJson(io, after);
    else io.out(labelled(after));
    return 0;
  });
}

export const runsTagCommand: Command = {
  name: 'tag',
  summary: 'add tags to a run (--remove: take them off)',
  usage: `Usage: gpu-share runs tag ID TAG… [--remove] [--json]

Adds the tags to the run (one already there is kept once), or with --remove takes them off; the run may be live or
ended. ${LIMITS}
The Runs view searches and filters by tag and shows them when runs are compared.
--json prints the RunSnapshot as POST /v1/runs/{id}/labels answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, { ...operatorOptions, remove: { type: 'boolean' } });
    const [runId, ...tags] = positionals;
    if (runId === undefined || tags.length === 0) throw new UsageError('give the run and at least one tag: gpu-share runs tag ID TAG… (gpu-share runs list shows the ids)');
    for (const tag of tags) {
      const problem = tagProblem(tag);
      if (problem) throw new UsageError(problem);
    }
    if (!values.remove && tags.length > MAX_TAGS) throw new UsageError(`a run has at most ${MAX_TAGS} tags: ${tags.length} were given`);
    return sendChange('gpu-share runs tag', values, io, runId, values.remove ? { removeTags: tags } : { addTags: tags });
  },
};

export const runsNoteCommand: Command = {
  name: 'note',
  summary: "set a run's note (\"\" clears it)",
  usage: `Usage: gpu-share runs note ID TEXT [--json]

Replaces the run's note with TEXT (quote it; an empty "" clears it). ${LIMITS}
--json prints the RunSnapshot as POST /v1/runs/{id}/labels answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, operatorOptions);
    if (positionals[0] === undefined || positionals[1] === undefined) throw new UsageError('give the run and the note: gpu-share runs note ID "TEXT" (quote it; "" clears it)');
    noMorePositionals(positionals, 2, ': quote the note as one argument, gpu-share runs note ID "TEXT WITH SPACES"');
    const problem = noteProblem(positionals[1]);
    if (problem) throw new UsageError(problem);
    return sendChange('gpu-share runs note', values, io, positionals[0], { note: positionals[1] });
  },
};
