/**
 * A job's output under its opened row, on demand: live while the job runs (refreshed every 2 s), its
 * GPU_SHARE_PROGRESS lines left out unless asked (three a step were nearly all of it; their latest is one status
 * line instead), each line with the time the coordinator received it when Timestamps is on (as the run page's), and
 * kept at its end while it grows unless the person scrolled up.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import type { JobSnapshot } from '../../../src-shared/jobs/types';
import { clockTime, CLOCK_WIDTH, timedLines, timeStamper } from '../../../src-shared/runs/line-time';
import { isProgressLine } from '../../../src-shared/runs/output-lines';
import { lastProgress, progressStatusText } from '../../../src-shared/runs/progress-status';
import { useApp } from '../../store/app-store';
import { RefreshIcon } from '../../ui/icons';
import { useJobCommands } from './use-job-commands';
import { JobLossChart } from './job-loss';

const LIVE_OUTPUT_MS = 2000;
const NO_TIMES: readonly (number | null)[] = [];

/** Pixels from the bottom within which the output counts as followed: it stays at its end as it grows. */
const FOLLOW_SLACK_PX = 24;

/**
 * The output text: progress lines left out unless asked (their latest as one status line above), and kept at its
 * end while it grows as long as the person has not scrolled up.
 */
function JobOutputText({ job, output, times }: { job: JobSnapshot; output: string; times: readonly (number | null)[] }) {
  const [showProgress, setShowProgress] = useState(false);
  const [timestamps, setTimestamps] = useState(false);
  const pre = useRef<HTMLPreElement>(null);
  const following = useRef(true);
  const status = useMemo(() => lastProgress(output), [output]);
  const shown = useMemo(() => {
    const stamp = timestamps ? timeStamper(clockTime, CLOCK_WIDTH) : () => '';
    return timedLines(output, times, (line) => showProgress || !isProgressLine(line))
      .map((l) => stamp(l.at) + l.line)
      .join('');
  }, [output, times, showProgress, timestamps]);
  useEffect(() => {
    const el = pre.current;
    if (el && following.current) el.scrollTop = el.scrollHeight;
  }, [shown]);
  return (
    <>
      <label className="job-output-options small muted">
        <input type="checkbox" checked={showProgress} onChange={(e) => setShowProgress(e.target.checked)} data-testid="job-output-show-progress" />
        Show progress lines
      </label>
      <label className="job-output-options small muted" title="Each line's time, as the coordinator received it (local time)">
        <input type="checkbox" checked={timestamps} onChange={(e) => setTimestamps(e.target.checked)} data-testid="job-output-timestamps" />
        Timestamps
      </label>
      {status && (
        <p className="job-output-status small" data-testid="job-output-status">
          Latest progress: {progressStatusText(status)}
        </p>
      )}
      <JobLossChart output={output} />
      <pre
        ref={pre}
        className="job-output mono"
        tabIndex={0}
        aria-label={`Output of ${job.name}`}
        data-testid="job-output"
        data-timestamps={timestamps ? 'true' : 'false'}
        onScroll={(e) => {
          const el = e.currentTarget;
          following.current = el.scrollTop + el.clientHeight >= el.scrollHeight - FOLLOW_SLACK_PX;
        }}
      >
        {shown || (output ? '(only progress lines so far)' : '(no output yet)')}
      </pre>
    </>
  );
}

export function JobOutput({ job }: { job: JobSnapshot }) {
  const output = useApp((s) => s.jobs.output[job.id]);
  const times = useApp((s) => s.jobs.outputTimes[job.id]);
  const loading = useApp((s) => s.busy.includes(`jobs:output:${job.id}`));
  const commands = useJobCommands();
  // Live while it runs: an opened output refreshes itself every 2 s until the job ends.
  const shown = output !== undefined;
  const running = job.status === 'running';
  useEffect(() => {
    if (!shown || !running) return undefined;
    const timer = setInterval(() => void commands.loadJobOutput(job.id), LIVE_OUTPUT_MS);
    return () => clearInterval(timer);
  }, [shown, running, job.id, commands]);
  return (
    <div className="job-output-block">
      <button type="button" className="button small" disabled={loading} onClick={() => void commands.loadJobOutput(job.id)}>
        <RefreshIcon /> {output === undefined ? 'Show output' : 'Refresh output'}
      </button>
      {shown && running && <span className="muted small" data-testid="job-output-live"> live: refreshes every {LIVE_OUTPUT_MS / 1000} s while it runs</span>}
      {output !== undefined && <JobOutputText job={job} output={output} times={times ?? NO_TIMES} />}
    </div>
  );
}
