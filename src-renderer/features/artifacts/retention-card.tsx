/**
 * The artifact retention rule in the Artifacts view (issue 25, housekeeping): what it is, what is kept under it,
 * and a small form to change it (an empty field is no limit). The core enforces it at once, oldest first, and says
 * each removal in Events.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { describeRetention, type ArtifactHousekeeping } from '../../../src-shared/jobs/artifact-retention';
import { FormField } from '../../ui/form-field';
import { useApp } from '../../store/app-store';
import { formatBytes } from '../jobs/job-format';
import type { ArtifactCommands } from './artifact-commands';

/** A field's text as a limit: empty is none (null), else a number above 0 (whole when `whole`); a string says what is wrong. */
function limitOf(text: string, whole: boolean): number | null | string {
  if (text.trim() === '') return null;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || (whole && !Number.isInteger(n))) return whole ? 'a whole number above 0, or empty' : 'a number above 0, or empty';
  return n;
}

export function RetentionCard({ housekeeping, commands }: { housekeeping: ArtifactHousekeeping; commands: ArtifactCommands }) {
  const { retention, count, totalBytes } = housekeeping;
  const busy = useApp((s) => s.busy.includes('artifacts:retention'));
  const [keepLast, setKeepLast] = useState(retention.keepLast?.toString() ?? '');
  const [maxGb, setMaxGb] = useState(retention.maxTotalGb?.toString() ?? '');
  useEffect(() => {
    setKeepLast(retention.keepLast?.toString() ?? '');
    setMaxGb(retention.maxTotalGb?.toString() ?? '');
  }, [retention.keepLast, retention.maxTotalGb]);
  const keep = limitOf(keepLast, true);
  const size = limitOf(maxGb, false);
  const save = (e: FormEvent) => {
    e.preventDefault();
    if (typeof keep === 'string' || typeof size === 'string') return;
    void commands.setRetention({ keepLast: keep, maxTotalGb: size });
  };
  return (
    <section className="card retention-card" aria-labelledby="retention-title" data-testid="retention-card">
      <h2 id="retention-title" className="card-title">
        Retention
      </h2>
      <p data-testid="retention-rule">
        <strong>{describeRetention(retention)[0]!.toUpperCase() + describeRetention(retention).slice(1)}</strong>
        <span className="muted">
          {' '}
          · {count} artifact{count === 1 ? '' : 's'}, {formatBytes(totalBytes)} kept
        </span>
      </p>
      <form className="retention-form" onSubmit={save}>
        <FormField id="retention-keep-last" label="Keep the newest" error={typeof keep === 'string' ? keep : undefined}>
          {(p) => <input {...p} type="text" inputMode="numeric" placeholder="all" value={keepLast} onChange={(e) => setKeepLast(e.target.value)} />}
        </FormField>
        <FormField id="retention-max-gb" label="At most (GB)" error={typeof size === 'string' ? size : undefined}>
          {(p) => <input {...p} type="text" inputMode="decimal" placeholder="no limit" value={maxGb} onChange={(e) => setMaxGb(e.target.value)} />}
        </FormField>
        <button type="submit" className="button small" disabled={busy || typeof keep === 'string' || typeof size === 'string'}>
          {busy ? 'Saving…' : 'Save rule'}
        </button>
      </form>
      <p className="hint">Enforced now, after every stored output and at start, oldest first; an artifact whose job runs again is kept. Each removal is an event.</p>
    </section>
  );
}
