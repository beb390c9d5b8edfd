/**
 * Start a run: prefilled with the bundled example, kept as typed across views (its store outlives the view),
 * refilled by "Run again". Open whatever runs are live (runs share the cluster: each takes workers no other run
 * or job holds), opened again and focused on each refill.
 */
import { useEffect, useRef, type FormEvent } from 'react';
import { COMM_LABELS } from '../../../../src-shared/runs/comm-text';
import { noGpuReason } from '../../../../src-shared/runs/gpu-request';
import { COMM_SETTINGS, MAX_LOCAL_SGD_PERIOD, type CommSetting } from '../../../../src-shared/scheduling/comm-types';
import { useApp } from '../../../store/app-store';
import { editRunForm, fillRunForm, setRunFormErrors, specFromFields, updateRunForm, useRunForm, type RunFormFields } from './run-form';
import { refusalField } from './run-form-project';
import { FormField } from '../../../ui/form-field';
import { PlayIcon } from '../../../ui/icons';
import { useRunCommands } from '../use-run-commands';
import { RunStartProject } from './run-start-project';

/** How members exchange what they learn: a choice of the comm settings. */
function CommField({ value, error, onChange }: { value: CommSetting; error?: string; onChange: (v: CommSetting) => void }) {
  return (
    <FormField id="run-comm" label="Communication" error={error} hint="How members exchange what they learn each step. Auto picks per generation from the measured links.">
      {(p) => (
        <select {...p} name="comm" value={value} onChange={(e) => onChange(e.target.value as CommSetting)}>
          {COMM_SETTINGS.map((c) => (
            <option key={c} value={c}>
              {COMM_LABELS[c]}
            </option>
          ))}
        </select>
      )}
    </FormField>
  );
}

/** Use GPUs, shown off and disabled with the reason when no live worker has an NVIDIA GPU. */
function UseGpusCheck({ checked, noGpu, onChange }: { checked: boolean; noGpu: string | null; onChange: (on: boolean) => void }) {
  return (
    <label className="check" title={noGpu ? `Use GPUs is off: ${noGpu}` : undefined}>
      <input type="checkbox" name="useGpus" checked={checked && !noGpu} disabled={noGpu !== null} onChange={(e) => onChange(e.target.checked)} />
      <span>
        Use GPUs{' '}
        {noGpu ? (
          <span className="muted" data-testid="no-gpu-reason">
            — off: no worker has an NVIDIA GPU, this run trains on the CPU
          </span>
        ) : (
          <span className="muted">— sets CUDA_VISIBLE_DEVICES and proves residency</span>
        )}
      </span>
    </label>
  );
}

/** Open (the person may fold it) and never disabled by a live run: a new run goes alongside the live ones. */
export function StartRunForm({ liveRuns = 0 }: { liveRuns?: number }) {
  const example = useApp((s) => s.exampleRun);
  // No live worker has an NVIDIA GPU: the box is shown unticked and disabled, and the run starts on the CPU.
  const noGpu = noGpuReason(useApp((s) => s.workers));
  const starting = useApp((s) => s.busy.includes('startRun'));
  const commands = useRunCommands();
  const fields = useRunForm((s) => s.fields);
  const errors = useRunForm((s) => s.errors);
  const base = useRunForm((s) => s.base);
  const refills = useRunForm((s) => s.refills);
  const details = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    if (example && !fields) updateRunForm(fillRunForm, example, false);
  }, [example, fields]);
  useEffect(() => {
    if (refills === 0 || !details.current) return;
    details.current.open = true;
    details.current.scrollIntoView({ block: 'nearest' });
    document.getElementById('run-name')?.focus();
  }, [refills]);
  if (!fields) return null;
  const set = <K extends keyof RunFormFields>(key: K, value: RunFormFields[K]) => updateRunForm(editRunForm, { ...fields, [key]: value });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const result = specFromFields(noGpu ? { ...fields, useGpus: false } : fields, base ?? example);
    if (!result.ok) {
      updateRunForm(setRunFormErrors, result.errors);
      const first = Object.keys(result.errors)[0];
      if (first) document.getElementById(`run-${first}`)?.focus();
      return;
    }
    updateRunForm(setRunFormErrors, {});
    // A refusal about the project (no such folder, script outside it, over the limits) is shown at its field.
    await commands.startRun(result.spec, (message) => {
      const field = refusalField(message);
      if (!field) return false;
      updateRunForm(setRunFormErrors, { [field]: message.charAt(0).toUpperCase() + message.slice(1) });
      document.getElementById(`run-${field}`)?.focus();
      return true;
    });
  };
  const commandHint = fields.project.trim()
    ? 'Training script, relative to the project folder, and its arguments. Launched with torchrun on every member, in its copy of the project.'
    : "Training script and its arguments, on every worker. Launched with torchrun. The example's --step-sleep slows each step so you can watch it (and stop a worker mid-run); remove it for full speed.";
  const text = (key: Exclude<keyof RunFormFields, 'useGpus' | 'comm' | 'dataMode'>, label: string, opts: { hint?: string; numeric?: boolean } = {}) => (
    <FormField id={`run-${key}`} label={label} error={errors[key]} hint={opts.hint}>
      {(p) => <input {...p} name={key} type="text" inputMode={opts.numeric ? 'numeric' : undefined} value={fields[key]} onChange={(e) => set(key, e.target.value)} spellCheck={false} />}
    </FormField>
  );
  return (
    <details ref={details} className="card start-run" open>
      <summary className="card-title">
        <span>
          Start a run
          {liveRuns > 0 && <span className="muted small"> · alongside {liveRuns === 1 ? 'the live run' : `the ${liveRuns} live runs`}</span>}
        </span>
      </summary>
      <form onSubmit={(e) => void submit(e)} noValidate data-testid="start-run-form">
        {text('name', 'Name')}
        <RunStartProject fields={fields} errors={errors} set={set} />
        <FormField id="run-command" label="Command" error={errors.command} hint={commandHint}>
          {(p) => <textarea {...p} name="command" rows={3} value={fields.command} onChange={(e) => set('command', e.target.value)} spellCheck={false} className="mono" />}
        </FormField>
        <div className="field-row">
          {text('samples', 'Samples', { numeric: true })}
        </div>
        <div className="field-row">
          {text('minWorkers', 'Min workers', { numeric: true })}
          {text('maxWorkers', 'Max workers', { numeric: true })}
          {text('maxRestarts', 'Max restarts', { numeric: true })}
        </div>
        <CommField value={fields.comm} error={errors.comm} onChange={(v) => set('comm', v)} />
        {fields.comm === 'local-sgd' &&
          text('localSgdPeriod', 'Average every (steps)', { numeric: true, hint: `1–${MAX_LOCAL_SGD_PERIOD}; empty: the shortest that keeps communication within 10 % of a step` })}
        <UseGpusCheck checked={fields.useGpus} noGpu={noGpu} onChange={(on) => set('useGpus', on)} />
        <div className="form-actions">
          <button type="submit" className="button primary" disabled={starting}>
            <PlayIcon /> {starting ? 'Starting…' : 'Start run'}
          </button>
          {example && (
            <button type="button" className="button ghost" onClick={() => updateRunForm(fillRunForm, example, false)}>
              Reset to example
            </button>
          )}
        </div>
      </form>
    </details>
  );
}
