/** Prints a run's output as it grows, until the run ends: `runs logs --follow` and `runs start --follow`. */
import { setTimeout as sleep } from 'node:timers/promises';
import { ExpectedLabeller, lastStreamLines, streamJson, streamText } from '../../../../src-shared/runs/expected-stream';
import type { OutputFilter } from '../../../../src-shared/runs/output-lines';
import { lastProgress, progressStatusText } from '../../../../src-shared/runs/progress-status';
import type { CliIo } from '../../command';
import type { OperatorClient } from '../../operator/operator-client';
import { LIVE_STATES } from './run-format';
import { OutputFollower } from './output-follower';
import { fetchRun } from './run-select';

export const FOLLOW_INTERVAL_MS = 1000;
/** Exit status of a followed run that ended other than finished (failed or stopped). */
export const EXIT_RUN_DID_NOT_FINISH = 6;
/** With progress lines hidden, the latest step is said on stderr at most this often (and once more at the end). */
export const STATUS_EVERY_MS = 5000;

export interface FollowOptions {
  /** One JSON object per line instead of raw text. */
  json: boolean;
  /** Of the output there already, print only the last this many lines (0: all). */
  tail?: number;
  intervalMs?: number;
  /** Which lines to print (runs logs --worker, progress lines left out); the others still count for the labels. */
  filter?: OutputFilter;
  /** With progress lines hidden, say the latest step on stderr every STATUS_EVERY_MS (`runs start --follow`). */
  status?: boolean;
  /** Start each printed line with this prefix for its time (`runs logs --timestamps`). */
  stamp?: (at: number | null) => string;
}

/** The last `lines` lines of `text` (all of it for 0). */
export function lastLines(text: string, lines: number): string {
  return lines > 0 ? text.split(/(?<=\n)/).slice(-lines).join('') : text;
}

/**
 * Polls output and state every `intervalMs` and prints what is new: text, the survivors' expected relaunch errors
 * under their "┄ expected: … ┄" line as plain `runs logs` prints them (expected-stream.ts), or with `json` one object
 * per line ({runId, output, expected} per chunk, then {runId, state, stateCause}). Resolves with 0 when the run
 * finished, 6 otherwise.
 */
export async function followRun(client: OperatorClient, runId: string, io: CliIo, options: FollowOptions): Promise<number> {
  const { json } = options;
  const follower = new OutputFollower();
  const labeller = new ExpectedLabeller(options.filter);
  const status = new StatusLine(io, !json && options.status === true && options.filter?.hideProgress === true);
  for (let first = true; ; first = false) {
    // State first: once it says ended, the output read after it is the whole of it.
    const run = await fetchRun(client, runId);
    const live = LIVE_STATES.has(run.state);
    const { output, times } = await client.call('runOutput', [runId], undefined);
    const chunk = follower.next(output, !live);
    // JSON carries the times whenever the coordinator gives them; text only with --timestamps.
    let lines = labeller.push(chunk.text, !live, (times ?? []).slice(chunk.firstLine));
    if (first) lines = lastStreamLines(lines, options.tail ?? 0);
    if (chunk.skipped) {
      const note = 'output went faster than it could be followed: some lines were skipped';
      if (json) io.out(`${JSON.stringify({ runId, skipped: true, note })}\n`);
      else io.err(`[gpu-share] ${note}\n`);
    }
    const text = streamText(lines, options.stamp);
    if (text) io.out(json ? `${JSON.stringify({ runId, ...streamJson(lines) })}\n` : text);
    status.seen(chunk.text, !live);
    if (!live) {
      if (json) io.out(`${JSON.stringify({ runId, state: run.state, stateCause: run.stateCause })}\n`);
      else io.err(`${text && !text.endsWith('\n') ? '\n' : ''}[gpu-share] run ${runId} ${run.state}${run.stateCause ? ` — ${run.stateCause}` : ''}\n`);
      return run.state === 'finished' ? 0 : EXIT_RUN_DID_NOT_FINISH;
    }
    await sleep(options.intervalMs ?? FOLLOW_INTERVAL_MS);
  }
}

/** In place of the hidden progress lines: "[gpu-share] step 120 of 300 · loss 0.5312" on stderr, now and then. */
class StatusLine {
  private said = '';
  private saidAt = -Infinity;
  private latest = '';

  constructor(
    private readonly io: CliIo,
    private readonly on: boolean,
  ) {}

  seen(chunk: string, last: boolean): void {
    if (!this.on) return;
    const p = lastProgress(chunk);
    if (p) this.latest = progressStatusText(p);
    const now = Date.now();
    if (!this.latest || this.latest === this.said || (!last && now - this.saidAt < STATUS_EVERY_MS)) return;
    this.io.err(`[gpu-share] ${this.latest}\n`);
    this.said = this.latest;
    this.saidAt = now;
  }
}
