/**
 * The Start run form's project fields (issue 23): the folder, its data folder and mode, the Python modules to
 * check, read into RunSpec's project fields with a message per field; and a coordinator's refusal of a start
 * ("no folder …", "script … is not in the project", "… over the limits") placed at the field it concerns.
 */
import { PROJECT_PATH_PATTERN, type DataMode } from '../../../../src-shared/projects/project-protocol';
import type { RunSpecInput } from '../../../../src-shared/worker-protocol';

export interface ProjectFormFields {
  project: string;
  data: string;
  dataMode: DataMode;
  pythonCheck: string;
}

type ProjectErrors = Partial<Record<keyof ProjectFormFields, string>>;
type ProjectSpec = Pick<RunSpecInput, 'project' | 'data' | 'dataMode' | 'pythonCheck'>;

const MODULE_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** POSIX absolute, or a Windows drive or UNC path: the coordinator's machine may be either. */
export function isAbsoluteFolder(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\');
}

export function readProjectFields(fields: ProjectFormFields): { errors: ProjectErrors; spec: ProjectSpec } {
  const errors: ProjectErrors = {};
  const project = fields.project.trim();
  const data = fields.data.trim().replace(/\/+$/, '');
  const modules = fields.pythonCheck.split(/[\s,]+/).filter(Boolean);
  if (project && !isAbsoluteFolder(project)) {
    errors.project = `Give the folder's full path on the coordinator's machine, like /home/you/${project.replace(/^[./~]+/, '') || 'project'}`;
  }
  if (data && !project) errors.data = 'A data folder is inside a project: choose the project folder first';
  else if (data && !PROJECT_PATH_PATTERN.test(data)) errors.data = 'The data folder is a path inside the project, like data or data/train (no leading /, no ..)';
  const badModule = modules.find((m) => !MODULE_PATTERN.test(m));
  if (badModule) errors.pythonCheck = `"${badModule}" is not a Python module name (like numpy or sentencepiece); separate names with commas`;
  else if (modules.length > 64) errors.pythonCheck = `${modules.length} modules: at most 64`;
  if (!project) return { errors, spec: modules.length ? { pythonCheck: modules } : {} };
  return {
    errors,
    spec: {
      project,
      ...(data ? { data } : {}),
      ...(data ? { dataMode: fields.dataMode } : {}),
      ...(modules.length ? { pythonCheck: modules } : {}),
    },
  };
}

/**
 * The field a refused start is about, from the coordinator's message; null when it is about none of them (it
 * stays in the page's banner). The data folder and the script are named before the project, since their messages
 * name the project too.
 */
export function refusalField(message: string): keyof ProjectFormFields | 'command' | null {
  const m = message.toLowerCase();
  if (/\bdata folder\b|--data\b|\bdata-mode\b|\bdatamode\b/.test(m)) return 'data';
  if (/\bpython-check\b|\bpythoncheck\b/.test(m)) return 'pythonCheck';
  if (/\bscript\b/.test(m)) return 'command';
  if (/\bproject\b|\bfolder\b|\.gpushareignore\b|\bsnapshot\b/.test(m)) return 'project';
  return null;
}
