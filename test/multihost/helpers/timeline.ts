/**
 * One time-ordered account of what every process said and what the coordinator recorded, for the message of
 * a failed case: "B's agent gave up at :41.2, the proxy had stalled B at :39.0" tells at a glance whether the
 * network, the agent or the coordinator moved first. Progress lines and Python tracebacks are left out (one line
 * per step, or dozens per stopped launcher, would drown the rest).
 */
import { performance } from 'node:perf_hooks';
import type { CoordinatorEvent } from '../../../src-shared/training';
import type { HostProcess } from './host-process';

const NOISE = /GPU_SHARE_PROGRESS |^(\s|Traceback|\^|torch\.|\w+(Error|Exception)\b)/;

function clock(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(14, 23); // mm:ss.mmm
}

/** The last `max` lines and events since `sinceEpochMs`, oldest first, each stamped mm:ss.mmm. */
export function timeline(procs: HostProcess[], events: CoordinatorEvent[], sinceEpochMs: number, max = 60): string {
  const origin = performance.timeOrigin;
  const entries: { at: number; text: string }[] = [];
  for (const p of procs) {
    for (const l of p.lines) {
      const at = origin + l.at;
      if (at >= sinceEpochMs && !NOISE.test(l.text) && l.text.trim() !== '') entries.push({ at, text: `${p.label}${l.stream === 'err' ? '!' : ''}| ${l.text}` });
    }
  }
  for (const e of events) if (e.at >= sinceEpochMs) entries.push({ at: e.at, text: `coordinator| [${e.kind}] ${e.message}` });
  entries.sort((a, b) => a.at - b.at);
  return entries
    .slice(-max)
    .map((e) => `  ${clock(e.at)} ${e.text}`)
    .join('\n');
}
