/**
 * A project's requirements.txt (and a run's --python-check) as the modules every member's Python must import before
 * it is placed. Nothing is installed: a member that cannot import one is held out with the line that asked for it.
 * Pure, so the coordinator that sends `prepare` and the tests read the same rules.
 */
import type { PythonModuleCheck } from './project-protocol';

export interface RequirementsParse {
  modules: PythonModuleCheck[];
  /** Lines left out, for a person: "requirements.txt line 4: '-r base.txt' not followed (include its modules here)". */
  notes: string[];
}

/** Distributions whose import name is not their name lower-cased with '-' as '_'. */
const IMPORT_NAMES: Readonly<Record<string, string>> = {
  'scikit-learn': 'sklearn',
  sklearn: 'sklearn',
  pillow: 'PIL',
  pyyaml: 'yaml',
  'opencv-python': 'cv2',
  'opencv-python-headless': 'cv2',
  'opencv-contrib-python': 'cv2',
  'opencv-contrib-python-headless': 'cv2',
  beautifulsoup4: 'bs4',
  'python-dateutil': 'dateutil',
  protobuf: 'google.protobuf',
  'scikit-image': 'skimage',
  'pytorch-lightning': 'pytorch_lightning',
  attrs: 'attr',
  pyzmq: 'zmq',
  'msgpack-python': 'msgpack',
  'python-dotenv': 'dotenv',
  pyjwt: 'jwt',
  'faiss-cpu': 'faiss',
  'faiss-gpu': 'faiss',
};

const MODULE_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;
/** A PEP 508 name at the start of a requirement, then optional extras, then anything (specifiers, markers). */
const REQUIREMENT_PATTERN = /^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?\s*(.*)$/;
const SPECIFIER_START = /^(?:$|[<>=!~;@(]|,)/;

/** The module a distribution is imported as: the table above, else lower-case with '-' and '.' as '_'. */
export function importNameOf(distribution: string): string {
  const key = distribution.toLowerCase().replace(/[._]+/g, '-');
  return IMPORT_NAMES[key] ?? distribution.toLowerCase().replace(/[-.]+/g, '_');
}

/** Strip an inline comment: '#' at the start or after whitespace (pip's rule; a '#' inside a URL stays). */
function withoutComment(line: string): string {
  const at = line.search(/(?:^|\s)#/);
  return (at < 0 ? line : line.slice(0, at)).trim();
}

/** Joins pip's backslash continuations, keeping each logical line's first physical line number. */
function logicalLines(text: string): { line: number; text: string }[] {
  const physical = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const out: { line: number; text: string }[] = [];
  let pending: { line: number; text: string } | null = null;
  physical.forEach((raw, index) => {
    const continued = raw.endsWith('\\');
    const body = continued ? raw.slice(0, -1) : raw;
    if (pending) pending.text += body;
    else pending = { line: index + 1, text: body };
    if (!continued) {
      out.push(pending);
      pending = null;
    }
  });
  if (pending) out.push(pending);
  return out;
}

function skipNote(file: string, line: number, text: string, why: string): string {
  const shown = text.length > 80 ? `${text.slice(0, 77)}…` : text;
  return `${file} line ${line}: '${shown}' ${why}`;
}

/** Parse requirements.txt text into module checks, in file order, each module once (its first line). */
export function parseRequirements(text: string, file = 'requirements.txt'): RequirementsParse {
  const modules: PythonModuleCheck[] = [];
  const notes: string[] = [];
  const seen = new Set<string>();
  for (const { line, text: raw } of logicalLines(text)) {
    const body = withoutComment(raw);
    if (!body) continue;
    if (body.startsWith('-r') || body.startsWith('--requirement') || body.startsWith('-c') || body.startsWith('--constraint')) {
      notes.push(skipNote(file, line, body, 'not followed: list the modules it needs in this file or with --python-check'));
      continue;
    }
    if (body.startsWith('-e') || body.startsWith('--editable')) {
      notes.push(skipNote(file, line, body, 'skipped: an editable install is not checked (add its module with --python-check)'));
      continue;
    }
    if (body.startsWith('-')) {
      notes.push(skipNote(file, line, body, 'skipped: a pip option, not a module'));
      continue;
    }
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(body) || body.startsWith('.') || body.startsWith('/')) {
      notes.push(skipNote(file, line, body, 'skipped: a URL or path, not a named module (add its module with --python-check)'));
      continue;
    }
    const match = REQUIREMENT_PATTERN.exec(body);
    if (!match || !SPECIFIER_START.test(match[3].trim())) {
      notes.push(skipNote(file, line, body, 'skipped: not a requirement this check understands'));
      continue;
    }
    const module = importNameOf(match[1]);
    if (!MODULE_PATTERN.test(module)) {
      notes.push(skipNote(file, line, body, `skipped: '${module}' is not a Python module name`));
      continue;
    }
    if (seen.has(module)) continue;
    seen.add(module);
    modules.push({ module, source: `${file} line ${line}` });
  }
  return { modules, notes };
}

/** --python-check modules, after the requirements (a module already listed keeps its requirements.txt line). */
export function withPythonCheck(modules: readonly PythonModuleCheck[], pythonCheck: readonly string[] | undefined): PythonModuleCheck[] {
  const out = [...modules];
  const seen = new Set(out.map((m) => m.module));
  for (const module of pythonCheck ?? []) {
    if (seen.has(module) || !MODULE_PATTERN.test(module)) continue;
    seen.add(module);
    out.push({ module, source: '--python-check' });
  }
  return out;
}
