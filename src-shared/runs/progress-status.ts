/**
 * One status line in place of a trainer's GPU_SHARE_PROGRESS lines (three a step, most of a job's or a run's
 * output): a job's output on the page and `gpu-share runs start --follow` leave those lines out and say this
 * instead. Pure; the lines may carry a `[node] ` prefix (a run's output) or not (a job's).
 */
import { isLauncherNote, isProgressLine, lineBody, splitLines } from './output-lines';

export interface ProgressStatus {
  /** The step the trainer last said it finished, counted from 0. */
  step: number;
  totalSteps: number | null;
  loss: number | null;
  samplesPerSec: number | null;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** The latest well-formed progress line of `text` (malformed ones skipped), or null when there is none. */
export function lastProgress(text: string): ProgressStatus | null {
  const lines = splitLines(text);
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!isProgressLine(line)) continue;
    try {
      const record = JSON.parse(lineBody(line).slice('GPU_SHARE_PROGRESS '.length)) as Record<string, unknown>;
      const step = num(record.step);
      if (step === null) continue;
      return { step, totalSteps: num(record.total_steps), loss: num(record.loss), samplesPerSec: num(record.samples_per_sec) };
    } catch {
      continue;
    }
  }
  return null;
}

/** "step 120 of 300 · loss 0.5312 · 812 samples/s": steps done (the step after the one counted from 0), capped at the total. */
export function progressStatusText(p: ProgressStatus): string {
  const done = p.totalSteps !== null && p.totalSteps > 0 ? Math.min(p.step + 1, p.totalSteps) : p.step + 1;
  const parts = [`step ${done}${p.totalSteps !== null && p.totalSteps > 0 ? ` of ${p.totalSteps}` : ''}`];
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
