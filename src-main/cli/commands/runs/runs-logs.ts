/**
 * `gpu-share runs logs [ID] [--follow]`: the run's output tail, every line prefixed with the machine that wrote it;
 * `--worker NAME` keeps one machine's lines, and the trainers' GPU_SHARE_PROGRESS lines (most of the text) are
 * left out unless `--progress` asks for them (src-shared/runs/output-lines.ts tells them apart). The survivors'
 * tracebacks a relaunch makes are labelled expected in every mode (src-shared/runs/expected-stream.ts).
 */
import { ExpectedLabeller, lastStreamLines, streamJson } from '../../../../src-shared/runs/expected-stream';
import { labelledOutputLines, outputNodes, type OutputFilter } from '../../../../src-shared/runs/output-lines';
import { ISO_LOCAL_WIDTH, isoLocalTime, lineStamper, timeStamper } from '../../../../src-shared/runs/line-time';
import { intOption, noMorePositionals, parseCommandLine, UsageError, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { followRun, lastLines } from './follow-run';
import type { OperatorClient } from '../../operator/operator-client';
import { EXIT, OperatorFailure } from '../../operator/operator-failure';
import { fetchRun, pickRunId } from './run-select';

export const runsLogsCommand: Command = {
  name: 'logs',
  summary: "a run's output, each line prefixed with its machine (--follow: as it comes)",
  usage: `Usage: gpu-share runs logs [ID] [--follow] [--tail N] [--worker NAME] [--progress] [--launcher-notes] [--timestamps] [--json]

Prints the run's output as the coordinator keeps it (its last 256 KiB), each line prefixed with the machine
that wrote it, the coordinator's own lines with [gpu-share]:
  [beta] ddp_example: rank 1 stopping after step 120 as asked (SIGTERM)
  [gpu-share] relaunching as generation 2 on 1 worker (worker gamma failed)
The torch tracebacks a survivor prints when a relaunch stops it are expected: they come under one line
  [beta] ┄ expected: worker gamma failed; generation 2 relaunched ┄
(with --follow too: a traceback that comes before the relaunch line is held until the next poll; if the relaunch
comes later still, the label says "(so were its N lines above)").
Without ID: the newest live run, or else the newest.

Options:
  --follow, -f   keep printing new output every second until the run ends; then exit 0 if it finished,
                 6 if it failed or was stopped (the last line, on stderr, says which)
  --tail N       only the last N lines (before following; with --follow a label line does not count)
  --worker NAME  only the lines of the worker on machine NAME (gpu-share for the coordinator's own lines)
  --progress     keep the trainers' GPU_SHARE_PROGRESS lines (left out by default: three a step)
  --launcher-notes
                 keep the launchers' notes on how each generation started (left out by default: about six a
                 worker a generation, "gpu-share warm launcher: rendezvous polls every 0.05 s …"; one that
                 reports a problem is always kept)
  --timestamps   start each line with the time the coordinator received it, ISO-8601 in local time
                 (2026-12-07T13:05:02+01:00); lines kept before times were recorded get blanks instead
  --json         {"runId", "output", "expected", "times"} ("output" as GET /v1/runs/{id}/output answers, without
                 labels; "expected": one {"node", "note", "lines"} per expected block, "lines" the 0-based indices
                 of its lines in "output"; "times": when each line of "output" was received, epoch ms, null where
                 not recorded); with --follow one JSON object per line: {"runId", "output", "expected", "times"} for
                 each new piece (a block begun in an earlier piece has "continued": true; a label that came late
                 has "earlier": N), {"runId", "skipped", "note"} when output went faster than it could be
                 followed, then {"runId", "state", "stateCause"}

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, {
      ...operatorOptions,
      follow: { type: 'boolean', short: 'f' },
      tail: { type: 'string' },
      worker: { type: 'string' },
      progress: { type: 'boolean' },
      'launcher-notes': { type: 'boolean' },
      timestamps: { type: 'boolean' },
    });
    noMorePositionals(positionals, 1);
    const tail = intOption(values.tail, 'tail', 0, 1, 1_000_000);
    const worker = values.worker?.trim();
    if (worker !== undefined && (worker.length === 0 || worker.length > 256)) throw new UsageError('--worker needs a machine name (1 to 256 characters), as `gpu-share runs show` lists them');
    const filter: OutputFilter = { node: worker ?? null, hideProgress: values.progress !== true, hideLauncher: values['launcher-notes'] !== true };
    return runOperator('gpu-share runs logs', values, io, async (client) => {
      const id = await pickRunId(client, positionals[0], false);
      const reply = await client.call('runOutput', [id], undefined, `no run "${id}" on this coordinator; run ids are listed by \`gpu-share runs list\``);
      if (worker !== undefined) await checkWorker(client, id, worker, reply.output);
      if (values.follow) return followRun(client, id, io, { json: values.json === true, tail, filter, ...(values.timestamps ? { stamp: timeStamper(isoLocalTime, ISO_LOCAL_WIDTH) } : {}) });
      if (values.json) {
        // "times" fits the lines of "output" as printed (the filter's survivors), not the reply's whole output.
        const stream = streamJson(lastStreamLines(new ExpectedLabeller(filter).push(reply.output, true, reply.times ?? []), tail));
        const { times: _whole, ...fields } = reply;
        printJson(io, { ...fields, ...stream, times: stream.times ?? [] });
      } else {
        // Survivors' expected relaunch errors come under their "┄ expected: … ┄" line, as on the run page.
        const stamp = values.timestamps ? lineStamper(reply.times ?? [], isoLocalTime, ISO_LOCAL_WIDTH) : undefined;
        const text = lastLines(labelledOutputLines(reply.output, filter, stamp), tail);
        io.out(text && !text.endsWith('\n') ? `${text}\n` : text);
      }
      return 0;
    });
  },
};

/** `--worker NAME` must name a machine of the run (a member, past or present, or one that wrote a line). */
async function checkWorker(client: OperatorClient, runId: string, worker: string, output: string): Promise<void> {
  const run = await fetchRun(client, runId);
  const known = [...new Set([...run.workerRows.map((r) => r.node), ...outputNodes(output)])];
  if (known.includes(worker)) return;
  throw new OperatorFailure(
    `run ${runId} has no worker "${worker}"; its machines: ${known.length ? known.join(', ') : 'none yet'} (pass one of them to --worker)`,
    EXIT.notFound,
    'not-found',
  );
}
