/** `gpu-share workers links [--measure] [--json]`: the measured bandwidth and round-trip time between the workers (issue 16). */
import { noMorePositionals, parseCommandLine, type Command } from '../../command';
import { OPERATOR_OPTIONS_USAGE, operatorOptions, printJson, runOperator } from '../../operator/operator-command';
import { formatLinks } from './links-format';

const linksOptions = { ...operatorOptions, measure: { type: 'boolean' } } as const;

/** The coordinator waits up to a minute for the probes; the CLI a little longer, so its answer is the one read. */
const MEASURE_TIMEOUT_MS = 75_000;

export const workersLinksCommand: Command = {
  name: 'links',
  summary: 'the measured links between workers: bandwidth, round-trip time, age, failed probes',
  usage: `Usage: gpu-share workers links [--measure] [--json]

Lists the links between the workers as their agents measured them over the address training uses: from, to,
bandwidth (a short timed transfer), round-trip time, how long ago, and why a probe failed; for 2 to 10 nodes
also a matrix (rows send, columns receive). Links are measured when a worker joins and every few minutes while
workers are idle (gpu-share serve --link-refresh); a run's communication strategy and ring order follow them.
  --measure    measure every link among the active workers now (busy ones too: a probe sends a few MB
               between two agents) and then print them; waits up to a minute (POST /v1/links/measure)
--json prints the LinkMeasurement[] of GET /v1/state's "links" as is (docs/api.md).

${OPERATOR_OPTIONS_USAGE}
`,
  async run(args, io) {
    const { values, positionals } = parseCommandLine(args, linksOptions);
    noMorePositionals(positionals);
    return runOperator('gpu-share workers links', values, io, async (client) => {
      if (values.measure && !values.json) io.err('Measuring every link among the active workers (a few seconds per pair)…\n');
      const { links } = values.measure ? await client.call('measureLinks', [], {}, undefined, MEASURE_TIMEOUT_MS) : await client.call('state', [], undefined);
      if (values.json) printJson(io, links);
      else io.out(formatLinks(links, Date.now()));
      return 0;
    });
  },
};
