/**
 * The Start run form's project fields (issue 23): the folder that is snapshotted and shipped to every member (a
 * folder picker in the desktop window; in a browser tab a path typed on the coordinator's machine, which the tab
 * cannot browse), and, once there is one, its data folder, the data mode and the Python modules to check.
 */
import { DATA_MODES, type DataMode } from '../../../../src-shared/projects/project-protocol';
import { useServices } from '../../../app-context';
import { useApp } from '../../../store/app-store';
import type { RunFormErrors, RunFormFields } from './run-form';
import { FormField } from '../../../ui/form-field';
import { FolderIcon } from '../../../ui/icons';
import { useRunCommands } from '../use-run-commands';

const DATA_MODE_LABELS: Record<DataMode, string> = {
  replicate: 'Replicate: all on every member',
  shard: 'Shard: files split over members',
};

type Set = <K extends keyof RunFormFields>(key: K, value: RunFormFields[K]) => void;

function ProjectFolderField({ fields, errors, set }: { fields: RunFormFields; errors: RunFormErrors; set: Set }) {
  const { inElectron } = useServices();
  const commands = useRunCommands();
  const picking = useApp((s) => s.busy.includes('pickProjectFolder'));
  const hint = inElectron
    ? 'Optional. Snapshotted (respecting .gitignore and .gpushareignore) and sent to every member; the command\'s script is then relative to it.'
    : 'Optional. A folder on the coordinator\'s machine (where gpu-share serve runs), typed as its full path: this browser tab cannot browse that machine. Snapshotted and sent to every member; the script is then relative to it.';
  const pick = async () => {
    const path = await commands.pickProjectFolder(fields.project.trim());
    if (path) set('project', path);
  };
  return (
    <FormField id="run-project" label="Project folder" error={errors.project} hint={hint}>
      {(p) => (
        <div className="input-with-button">
          <input
            {...p}
            name="project"
            type="text"
            className="mono"
            value={fields.project}
            placeholder={inElectron ? 'none: the command runs as given on each worker' : '/home/you/project'}
            onChange={(e) => set('project', e.target.value)}
            spellCheck={false}
          />
          {inElectron && (
            <button type="button" className="button" disabled={picking} onClick={() => void pick()} data-testid="pick-project">
              <FolderIcon /> Choose…
            </button>
          )}
        </div>
      )}
    </FormField>
  );
}

export function RunStartProject({ fields, errors, set }: { fields: RunFormFields; errors: RunFormErrors; set: Set }) {
  const hasProject = fields.project.trim() !== '';
  return (
    <fieldset className="project-fields" data-testid="run-project-fields">
      <legend className="visually-hidden">Project</legend>
      <ProjectFolderField fields={fields} errors={errors} set={set} />
      {hasProject && (
        <div className="field-row project-data-row">
          <FormField id="run-data" label="Data folder" error={errors.data} hint="Optional, inside the project (e.g. data). Empty: none.">
            {(p) => <input {...p} name="data" type="text" className="mono" value={fields.data} onChange={(e) => set('data', e.target.value)} spellCheck={false} />}
          </FormField>
          <FormField id="run-dataMode" label="Data mode" error={errors.dataMode}>
            {(p) => (
              <select {...p} name="dataMode" value={fields.dataMode} disabled={fields.data.trim() === ''} onChange={(e) => set('dataMode', e.target.value as DataMode)}>
                {DATA_MODES.map((m) => (
                  <option key={m} value={m}>
                    {DATA_MODE_LABELS[m]}
                  </option>
                ))}
              </select>
            )}
          </FormField>
        </div>
      )}
      <FormField
        id="run-pythonCheck"
        label="Python modules"
        error={errors.pythonCheck}
        hint="Optional: modules every member's Python must import before it trains (besides the project's requirements.txt), e.g. numpy, sentencepiece. Nothing is installed."
      >
        {(p) => <input {...p} name="pythonCheck" type="text" className="mono" value={fields.pythonCheck} onChange={(e) => set('pythonCheck', e.target.value)} spellCheck={false} />}
      </FormField>
    </fieldset>
  );
}
