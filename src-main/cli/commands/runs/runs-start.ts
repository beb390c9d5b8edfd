/** `gpu-share runs start [options] -- SCRIPT [ARGS…]`: starts a run, as the app's Start run form does. */
import { parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { shellWords } from '../../text-format';
import { followRun } from './follow-run';
import { projectStartLines } from './run-project-format';
import { HEARTBEAT_TIMEOUT_NOTE, RUN_SPEC_USAGE, runSpecFrom, runSpecOptions } from './run-spec-args';

/** What `runs start --follow` prints: the output a person reads, as `runs logs` prints it by default. */
const FOLLOW_FILTER = { hideProgress: true, hideLauncher: true } as const;
const startOptions = { ...operatorOptions, ...runSpecOptions, follow: { type: 'boolean', short: 'f' } } as const;

/** Options before `--`, the training command after it (or, without `--`, the words that are not options). */
function parseStart(args: string[]) {
  const end = args.indexOf('--');
  const head = end === -1 ? args : args.slice(0, end);
  try {
    const parsed = parseCommandLine(head, startOptions);
    return { values: parsed.values, command: [...parsed.positionals, ...(end === -1 ? [] : args.slice(end + 1))] };
  } catch (error) {
    if (error instanceof UsageError && error.message.startsWith('unknown option') && end === -1) {
      throw new UsageError(`${error.message}; options of the training script go after --, as in: gpu-share runs start --samples 10000 -- train.py --steps 300`);
    }
    throw error;
  }
}

export const runsStartCommand: Command = {
  name: 'start',
  summary: 'start a run of a training script on the cluster (or --example)',
  usage: `Usage: gpu-share runs start [options] -- SCRIPT [ARGS…]
       gpu-share runs start --example [options]

Starts a run: SCRIPT (a path on the worker machines, usually a .py trainer) with ARGS is launched through
torchrun on up to --max-workers active workers that no other run or job holds, each with its shard of the
samples. With --project DIR, the folder is snapshotted and shipped to every member first, and SCRIPT is a
path inside DIR. Several runs may be live at once, each on its own workers. With fewer free workers than --min-workers
it waits for them, and says what holds them (\`gpu-share runs list\`).

Examples:
  gpu-share runs start --example --follow
  gpu-share runs start --name lora-7b --samples 50000 --min-workers 2 --gpus -- /srv/train.py --epochs 3
  gpu-share runs start --project ~/proj --data data --data-mode shard --samples 512 -- train.py --epochs 3

${RUN_SPEC_USAGE}
  --follow, -f             then print its output until it ends (as \`runs logs --follow\`): the trainers'
                           GPU_SHARE_PROGRESS lines and the launchers' notes are left out, the latest step
                           said on stderr every 5 s instead ("[gpu-share] step 120 of 300 · loss 0.5312")

--json prints the RunSnapshot as POST /v1/runs answers (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, command } = parseStart(args);
    const spec = runSpecFrom(values, command, io.env, io.cwd);
    if (values['heartbeat-timeout'] !== undefined) io.err(`${HEARTBEAT_TIMEOUT_NOTE}\n`);
    return runOperator('gpu-share runs start', values, io, async (client) => {
      const run = await client.call('startRun', [], spec);
      if (values.json && !values.follow) {
        printJson(io, run);
        return 0;
      }
      if (values.json) io.out(`${JSON.stringify(run)}\n`);
      else {
        const waiting = run.state === 'waiting' ? ` It is waiting: ${run.stateCause}.` : '';
        io.err(`Started run ${run.id} (${run.spec.name}): ${shellWords(run.spec.command)}.${waiting}\n`);
        for (const line of projectStartLines(run)) io.err(`${line}\n`);
        if (!values.follow) io.err(`Follow it with: gpu-share runs logs ${run.id} --follow\n`);
      }
      if (values.follow) return followRun(client, run.id, io, { json: values.json === true, filter: FOLLOW_FILTER, status: true });
      if (!values.json) io.out(`${run.id}\n`);
      return 0;
    });
  },
};
