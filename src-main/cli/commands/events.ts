/** `gpu-share events [--run ID] [--job ID] [--node NAME] [--kind KIND] [--severity warning|error]`: the coordinator's events, filtered as the Events view filters them. */
import { EVENT_FILTER_KEYS, eventFilterToQuery, matchesEventFilter, type EventFilter } from '../../../src-shared/event-filter';
import type { CoordinatorEvent } from '../../../src-shared/training';
import { intOption, noMorePositionals, parseCommandLine, UsageError, type Command } from '../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../operator/operator-command';

const SEVERITY_WORD = { info: 'info', warning: 'WARN', error: 'ERROR' } as const;

/** One line an event: time, severity, message, then what it is about (`run=… job=… node=…`). */
export function formatEventLines(events: readonly CoordinatorEvent[]): string {
  if (events.length === 0) return 'No event matches.\n';
  const lines = events.map((e) => {
    const about = [e.runId && `run=${e.runId}`, e.jobId && `job=${e.jobId.slice(0, 12)}`, e.node && `node=${e.node}`].filter(Boolean).join(' ');
    return `${new Date(e.at).toTimeString().slice(0, 8)}  ${SEVERITY_WORD[e.severity].padEnd(5)}  ${e.message}  [${e.kind}${about ? ` ${about}` : ''}]`;
  });
  return `${lines.join('\n')}\n`;
}

/** The filter the options give; a job id may be given by its first characters, as `events` prints it. */
function filterOf(values: Partial<Record<(typeof EVENT_FILTER_KEYS)[number], string | undefined>>): EventFilter {
  const f: EventFilter = {};
  for (const key of EVENT_FILTER_KEYS) {
    const v = values[key];
    if (v === undefined) continue;
    if (key === 'severity') {
      if (v !== 'warning' && v !== 'error') throw new UsageError(`--severity is warning (warnings and errors) or error, not "${v}"`);
      f.severity = v;
    } else f[key] = v;
  }
  return f;
}

export const eventsCommand: Command = {
  name: 'events',
  summary: "the coordinator's events, filtered by run, job, node, kind or severity (talks to the running app)",
  usage: `Usage: gpu-share events [--run ID] [--job ID] [--node NAME] [--kind KIND] [--severity warning|error] [--last N] [--json]

What the coordinator did and why, oldest first, as the Events view shows them; each line ends with the event's
kind and the run, job and node it is about. The filters combine; they are the ones the Events view keeps in its
address (#/events?run=…&node=…), so a list here and a link there show the same events.
  --run ID            events of this run (its id, as \`gpu-share runs list\` prints)
  --job ID            events of this job (its id, or its first 12 characters as printed here)
  --node NAME         events about this node
  --kind KIND         one kind (worker-joined, run-failed, job-finished… as printed in brackets)
  --severity LEVEL    warning: warnings and errors; error: errors only
  --last N            only the newest N of those (default: all the coordinator keeps, up to 2000)
--json prints {"events": [CoordinatorEvent, …], "filter": "run=…"}.

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const options = { ...operatorOptions, run: { type: 'string' }, job: { type: 'string' }, node: { type: 'string' }, kind: { type: 'string' }, severity: { type: 'string' }, last: { type: 'string' } } as const;
    const { values, positionals } = parseCommandLine(args, options);
    noMorePositionals(positionals);
    const filter = filterOf(values);
    const last = values.last === undefined ? null : intOption(values.last, 'last', 0, 1, 1_000_000);
    return runOperator('gpu-share events', values, io, async (client) => {
      const { events } = await client.call('state', [], undefined);
      // A short job id (as printed) matches the job whose id starts with it.
      const job = filter.job;
      const full = job === undefined ? undefined : (events.find((e) => e.jobId?.startsWith(job))?.jobId ?? job);
      const wanted = full === undefined ? filter : { ...filter, job: full };
      const matching = events.filter((e) => matchesEventFilter(e, wanted));
      const shown = last === null ? matching : matching.slice(-last);
      if (values.json) printJson(io, { events: shown, filter: eventFilterToQuery(wanted) });
      else io.out(formatEventLines(shown));
      return 0;
    });
  },
};
