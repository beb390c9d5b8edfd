/**
 * How a run's communication is worded for people — the same words in `gpu-share runs show`, the run page's
 * decision line and the Start-a-run form — so the CLI and the app never disagree about what "fp16" or "every
 * 8 steps" means. Pure: shared by the CLI and the renderer.
 */
import { describeStrategy } from '../scheduling/comm-choice';
import { COMM_SETTINGS, MAX_LOCAL_SGD_PERIOD, type CommChange, type CommDecision, type CommSetting, type TrainerCommStats } from '../scheduling/comm-types';

/** Names for the run form's select and the run page ("Local SGD", "PowerSGD"). */
export const COMM_LABELS: Record<CommSetting, string> = {
  auto: 'Auto — recommended',
  ddp: 'DDP',
  fp16: 'FP16',
  powersgd: 'PowerSGD',
  'local-sgd': 'Local SGD',
};

const SHORT_LABELS: Record<CommSetting, string> = { auto: 'Auto', ddp: 'DDP', fp16: 'FP16', powersgd: 'PowerSGD', 'local-sgd': 'Local SGD' };

/** "local-sgd every 8 steps (auto)", "fp16 (asked for)", "fp16 (instead of powersgd)": the strategy in force and who chose it. */
export function commSummary(d: Pick<CommDecision, 'strategy' | 'localSgdPeriod' | 'requested'>): string {
  const how = d.requested === 'auto' ? 'auto' : d.requested === d.strategy ? 'asked for' : `instead of ${d.requested}`;
  return `${describeStrategy(d)} (${how})`;
}

/** "Local SGD every 8 steps — chosen automatically: <reason>" for the run page. */
export function commDecisionSentence(d: CommDecision): string {
  const what = d.strategy === 'local-sgd' && d.localSgdPeriod !== null ? `${SHORT_LABELS['local-sgd']} every ${d.localSgdPeriod} step${d.localSgdPeriod === 1 ? '' : 's'}` : SHORT_LABELS[d.strategy];
  if (d.requested === 'auto') return `${what} — chosen automatically: ${d.reason}`;
  if (d.requested === d.strategy) return isJustAsked(d.reason) ? `${what} — as asked` : `${what} — as asked: ${d.reason}`;
  return `${what} instead of ${SHORT_LABELS[d.requested]}: ${d.reason}`;
}

/** H3's reason for an explicit choice kept as it is ("asked for", "asked for (its period asked for)"): nothing to add. */
function isJustAsked(reason: string): boolean {
  return /^asked for( \(its period asked for\))?$/.test(reason);
}

/** The reason to print after the strategy in `runs show`: none when it only says the run asked for it. */
export function commReasonText(d: Pick<CommDecision, 'reason'>): string | null {
  return isJustAsked(d.reason) ? null : d.reason;
}

const HOW_WORDS: Record<CommChange['how'], string> = { launch: 'launched with', retune: 'retuned in place to', relaunch: 'relaunched with', kept: 'kept' };

/**
 * One entry of a run's decision list, after its time: "generation 2 retuned in place to local-sgd every 77 steps
 * (10.0 % of a step communicating): <reason>". The same words in `runs show` and on the run page.
 */
export function commChangeText(c: CommChange): string {
  const share = c.commShare === null ? '' : ` (${(c.commShare * 100).toFixed(1)} % of a step communicating)`;
  return `generation ${c.generation} ${HOW_WORDS[c.how]} ${describeStrategy(c)}${share}: ${c.reason}`;
}

/** "14:03:07" (UTC): a decision's time of day, for the CLI's list. */
export function clockTime(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(11, 19);
}

/** What a run asked for before its first generation decided: "auto", "local-sgd every 16 steps". */
export function requestedCommText(comm: CommSetting | undefined, period: number | undefined): string {
  const c = comm ?? 'auto';
  return c === 'local-sgd' && period !== undefined ? `local-sgd every ${period} step${period === 1 ? '' : 's'}` : c;
}

/** "17.0 MB", "820 kB": decimal units, as network speeds are. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${Math.round(bytes / 1e3)} kB`;
  return `${Math.round(bytes)} B`;
}

/** "17.0 MB of gradients per step, 0.21 s compute" ("4.2 ms compute" for a tiny model). */
export function commStatsText(s: TrainerCommStats): string {
  const t = s.stepComputeS;
  const time = t >= 10 ? `${t.toFixed(0)} s` : t >= 1 ? `${t.toFixed(1)} s` : t >= 0.1 ? `${t.toFixed(2)} s` : `${(t * 1000).toFixed(t >= 0.01 ? 0 : 1)} ms`;
  return `${formatBytes(s.gradBytes)} of gradients per step, ${time} compute`;
}

/** The comm fields of a run spec, checked the same way in the CLI and the form; a sentence on a mistake. */
export type CommChoice = { ok: true; comm: CommSetting; localSgdPeriod?: number } | { ok: false; field: 'comm' | 'localSgdPeriod'; message: string };

/**
 * `comm` as typed ("local-sgd") and the period as typed ("8", or '' / undefined for none). An unknown strategy
 * names the allowed ones; a period needs local-sgd and a whole number 1..MAX_LOCAL_SGD_PERIOD.
 */
export function readCommChoice(comm: string | undefined, period: string | undefined): CommChoice {
  const c = (comm ?? 'auto').trim();
  if (!(COMM_SETTINGS as readonly string[]).includes(c)) {
    return { ok: false, field: 'comm', message: `"${c.slice(0, 40)}" is not a communication strategy: choose ${COMM_SETTINGS.slice(0, -1).join(', ')} or ${COMM_SETTINGS.at(-1)!}` };
  }
  const setting = c as CommSetting;
  const p = (period ?? '').trim();
  if (p === '') return { ok: true, comm: setting };
  if (setting !== 'local-sgd') {
    return { ok: false, field: 'localSgdPeriod', message: `a local SGD period only applies to local-sgd (the run uses ${setting}): drop the period or choose local-sgd` };
  }
  if (!/^\d+$/.test(p) || Number(p) < 1 || Number(p) > MAX_LOCAL_SGD_PERIOD) {
    return { ok: false, field: 'localSgdPeriod', message: `the local SGD period is a whole number of steps from 1 to ${MAX_LOCAL_SGD_PERIOD}, got "${p.slice(0, 40)}"` };
  }
  return { ok: true, comm: setting, localSgdPeriod: Number(p) };
}
