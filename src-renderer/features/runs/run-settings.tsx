/**
 * What a run was started with, on its page: the command, the environment it added (names only: values may be
 * secrets), min/max workers, communication, GPUs, processes per machine and restarts — what "Run again" fills
 * the form with, so a person can see it before pressing it.
 */
import type { RunSpec } from '../../../src-shared/training';
import { requestedCommText } from '../../../src-shared/runs/comm-text';
import { joinCommand } from '../../ui/format';

export interface RunSetting {
  label: string;
  value: string;
  mono?: boolean;
}

/** The settings as label/value pairs (pure, for a unit test). */
export function runSettings(spec: RunSpec): RunSetting[] {
  const envNames = Object.keys(spec.env).sort();
  const perMember = spec.placement?.gpusPerMember;
  const gpus = spec.useGpus ? `yes${perMember ? `, ${perMember} per member` : ''}` : 'no (CPU)';
  const nproc = spec.nprocPerNode === 'gpu' ? 'one per GPU' : String(spec.nprocPerNode);
  return [
    { label: 'Command', value: joinCommand(spec.command), mono: true },
    { label: 'Environment', value: envNames.length === 0 ? 'nothing added' : envNames.join(', '), mono: envNames.length > 0 },
    { label: 'Workers', value: `min ${spec.minWorkers}, max ${spec.maxWorkers}` },
    { label: 'Communication', value: requestedCommText(spec.comm, spec.localSgdPeriod) },
    { label: 'GPUs', value: gpus },
    { label: 'Launcher', value: `${spec.launcher}, ${nproc} process${spec.nprocPerNode === 1 ? '' : 'es'} per machine` },
    { label: 'Max restarts', value: String(spec.maxRestarts) },
    { label: 'Samples', value: String(spec.samples) },
  ];
}

export function RunSettings({ spec }: { spec: RunSpec }) {
  return (
    <section className="card" aria-labelledby="run-settings-title">
      <h3 id="run-settings-title" className="card-title">
        Command and settings
      </h3>
      <dl className="run-settings" data-testid="run-settings">
        {runSettings(spec).map((s) => (
          <div key={s.label} className="run-setting" data-setting={s.label}>
            <dt>{s.label}</dt>
            <dd className={s.mono ? 'mono' : undefined}>{s.value}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
