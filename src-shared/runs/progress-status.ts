/**
 * One status line in place of a trainer's GPU_SHARE_PROGRESS lines (three a step, most of a job's or a run's
 * output): a job's output on the page and `gpu-share runs start --follow` leave those lines out and say this
 * instead. Pure; the lines may carry a `[node] ` prefix (a run's output) or not (a job's).
 */
import { isLauncherNote, isProgressLine, parseProgressLine, splitLines, type LineProgress } from './output-lines';
import { stepsOfTotal } from './steps-done';

/** The latest progress: the step the trainer last said it finished (counted from 0) and its figures. */
export type ProgressStatus = LineProgress;

/** The latest well-formed progress line of `text` (malformed ones skipped), or null when there is none. */
export function lastProgress(text: string): ProgressStatus | null {
  const lines = splitLines(text);
  for (let i = lines.length - 1; i >= 0; i--) {
    const progress = parseProgressLine(lines[i]!);
    if (progress) return progress;
  }
  return null;
}

/** "step 120 of 300 · loss 0.5312 · 812 samples/s": steps done (the step after the one counted from 0), capped at the total. */
export function progressStatusText(p: ProgressStatus): string {
  const parts = [`step ${stepsOfTotal(p.step, p.totalSteps)}`];
  if (p.loss !== null) parts.push(`loss ${p.loss.toPrecision(4)}`);
  if (p.samplesPerSec !== null) parts.push(`${Math.round(p.samplesPerSec)} samples/s`);
  return parts.join(' · ');
}

/** `text` without its progress lines (and, when asked, its launchers' notes): what a reader is shown. */
export function withoutProgress(text: string, hideLauncher = false): string {
  return splitLines(text)
    .filter((line) => !isProgressLine(line) && !(hideLauncher && isLauncherNote(line)))
    .join('');
}
