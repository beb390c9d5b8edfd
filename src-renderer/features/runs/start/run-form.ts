/**
 * The Start run form's fields as text, to and from a RunSpecInput, and the form's own small store: what the
 * person typed survives a switch to another view, and "Run again" refills it from a finished run. Checked here
 * for messages next to the field; the core parses the spec again (runSpecSchema), so this is for the person,
 * not for safety.
 */
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { DataMode } from '../../../../src-shared/projects/project-protocol';
import { readCommChoice } from '../../../../src-shared/runs/comm-text';
import type { CommSetting } from '../../../../src-shared/scheduling/comm-types';
import { DEFAULT_MAX_WORKERS, type RunSpecInput } from '../../../../src-shared/worker-protocol';
import { joinCommand, splitCommand } from '../../../ui/format';
import { readProjectFields } from './run-form-project';

export interface RunFormFields {
  name: string;
  command: string;
  samples: string;
  minWorkers: string;
  maxWorkers: string;
  maxRestarts: string;
  useGpus: boolean;
  /** How members exchange gradients (issue 16); 'auto' lets the coordinator choose per generation. */
  comm: CommSetting;
  /** Steps between model averages; shown (and read) for local-sgd only; '' for the coordinator's choice. */
  localSgdPeriod: string;
  /** The project folder on the coordinator's machine ('' : none, the command runs as given on each worker). */
  project: string;
  /** The data folder inside the project. */
  data: string;
  dataMode: DataMode;
  /** Python modules every member must import, separated by commas or spaces. */
  pythonCheck: string;
}

export type RunFormErrors = Partial<Record<keyof RunFormFields, string>>;

export function fieldsFromSpec(spec: RunSpecInput): RunFormFields {
  return {
    name: spec.name ?? 'training run',
    command: joinCommand(spec.command),
    samples: String(spec.samples),
    minWorkers: String(spec.minWorkers ?? 1),
    maxWorkers: String(spec.maxWorkers ?? DEFAULT_MAX_WORKERS),
    maxRestarts: String(spec.maxRestarts ?? 3),
    useGpus: spec.useGpus ?? false,
    comm: spec.comm ?? 'auto',
    localSgdPeriod: spec.localSgdPeriod !== undefined ? String(spec.localSgdPeriod) : '',
    project: spec.project ?? '',
    data: spec.data ?? '',
    dataMode: spec.dataMode ?? 'replicate',
    pythonCheck: (spec.pythonCheck ?? []).join(', '),
  };
}

function wholeNumber(text: string, label: string, min: number, max: number): number | string {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return `${label} must be a whole number`;
  const n = Number(t);
  if (n < min || n > max) return `${label} must be between ${min} and ${max}`;
  return n;
}

/**
 * The spec to send, keeping what the form does not show (launcher, env, processes per node) from `base`. No
 * heartbeat timeout: it is the cluster's (serve --heartbeat-timeout), and the coordinator replaces a spec's.
 */
export function specFromFields(fields: RunFormFields, base: RunSpecInput | null): { ok: true; spec: RunSpecInput } | { ok: false; errors: RunFormErrors } {
  const errors: RunFormErrors = {};
  const name = fields.name.trim();
  if (!name) errors.name = 'Give the run a name';
  else if (name.length > 120) errors.name = 'The name is longer than 120 characters';
  const command = splitCommand(fields.command);
  if (!command.ok) errors.command = command.error;
  const samples = wholeNumber(fields.samples, 'Samples', 1, Number.MAX_SAFE_INTEGER);
  if (typeof samples === 'string') errors.samples = samples;
  const minWorkers = wholeNumber(fields.minWorkers, 'Min workers', 1, 1024);
  if (typeof minWorkers === 'string') errors.minWorkers = minWorkers;
  const maxWorkers = wholeNumber(fields.maxWorkers, 'Max workers', 1, 1024);
  if (typeof maxWorkers === 'string') errors.maxWorkers = maxWorkers;
  if (typeof minWorkers === 'number' && typeof maxWorkers === 'number' && minWorkers > maxWorkers) {
    errors.maxWorkers = `Max workers (${maxWorkers}) must be at least min workers (${minWorkers})`;
  }
  const maxRestarts = wholeNumber(fields.maxRestarts, 'Max restarts', 0, 1000);
  if (typeof maxRestarts === 'string') errors.maxRestarts = maxRestarts;
  // The period field is only shown for Local SGD: a number left in it under another strategy is not sent.
  const comm = readCommChoice(fields.comm, fields.comm === 'local-sgd' ? fields.localSgdPeriod : '');
  if (!comm.ok) {
    errors[comm.field] = comm.message.charAt(0).toUpperCase() + comm.message.slice(1);
  }
  const project = readProjectFields(fields);
  Object.assign(errors, project.errors);
  if (Object.keys(errors).length > 0 || !command.ok || !comm.ok) return { ok: false, errors };
  // What the form shows is what is sent: a project field emptied here is not kept from the spec it came from.
  const { localSgdPeriod: _basePeriod, project: _p, data: _d, dataMode: _m, pythonCheck: _c, ...kept } = base ?? {};
  return {
    ok: true,
    spec: {
      ...kept,
      comm: comm.comm,
      ...(comm.localSgdPeriod !== undefined ? { localSgdPeriod: comm.localSgdPeriod } : {}),
      name,
      command: command.argv,
      samples: samples as number,
      minWorkers: minWorkers as number,
      maxWorkers: maxWorkers as number,
      maxRestarts: maxRestarts as number,
      useGpus: fields.useGpus,
      ...project.spec,
    },
  };
}

export interface RunFormState {
  /** Null until the example run (or a run to repeat) fills it. */
  fields: RunFormFields | null;
  errors: RunFormErrors;
  /** The spec the fields came from: what the form does not show (launcher, env, processes per node) is kept from it. */
  base: RunSpecInput | null;
  /** Counts "Run again" presses: the form opens and takes focus on each. */
  refills: number;
}

export const emptyRunForm: RunFormState = { fields: null, errors: {}, base: null, refills: 0 };

/** Fills the form from a spec; `refill` when the person asked for it (Run again, Reset), not at first load. */
export function fillRunForm(state: RunFormState, spec: RunSpecInput, refill: boolean): RunFormState {
  return { fields: fieldsFromSpec(spec), errors: {}, base: spec, refills: state.refills + (refill ? 1 : 0) };
}

export function editRunForm(state: RunFormState, fields: RunFormFields): RunFormState {
  return { ...state, fields };
}

export function setRunFormErrors(state: RunFormState, errors: RunFormErrors): RunFormState {
  return { ...state, errors };
}

/** The page's one form: outside React, so it outlives the Runs view. */
export const runFormStore = createStore<RunFormState>()(() => emptyRunForm);

export function updateRunForm<A extends unknown[]>(change: (s: RunFormState, ...args: A) => RunFormState, ...args: A): void {
  runFormStore.setState((s) => change(s, ...args), true);
}

export function useRunForm<T>(selector: (s: RunFormState) => T): T {
  return useStore(runFormStore, selector);
}
