/** Reads one `[[jobs]]` or `[[hosts]]` entry into its spec with defaults, or collects why it cannot. */
import { NODE_NAME_PATTERN } from '../../../../src-shared/worker-protocol';
import type { HostPolicy, HyperValue, JobSpec } from '../../../../src-shared/jobs/types';
import { describeValue, FieldReader, isTable, type IssueList, stringProblem } from './field-reader';
import { utf8ByteLength } from '../../../../src-shared/cluster/read-yaml';

export const JOB_KEYS = [
  'name',
  'command',
  'model',
  'mode',
  'hyper',
  'seed',
  'require_cuda',
  'prefer_cuda',
  'min_vram_gib',
  'min_ram_gib',
  'min_cores',
  'allowed_hosts',
  'max_attempts',
  'data_mb',
  'mflops',
] as const;

export const HOST_KEYS = ['name', 'allow_jobs', 'deny_jobs'] as const;

export const MAX_JOB_NAME_LENGTH = 128;
/** numpy's seed range, so a trainer can seed every generator it uses with the same number. */
export const MAX_SEED = 0xffff_ffff;
/** GPU_SHARE_HYPER carries hyper as JSON; Linux refuses one environment string over 128 KiB. */
export const MAX_HYPER_JSON_BYTES = 64 * 1024;

const NODE_NAME_RULE = 'a node name starts with a letter or digit and uses only letters, digits, ".", "_" and "-" (at most 128); use the name from cluster.yaml or the node card';

function nodeNameProblem(name: string): string | null {
  return NODE_NAME_PATTERN.test(name) ? null : `is not a node name: ${NODE_NAME_RULE}`;
}

function notEmpty(item: string): string | null {
  return item === '' ? 'is empty; remove it or fill it in' : null;
}

/** hyper: a flat table of strings, finite numbers and booleans. */
function readHyper(value: unknown, path: (string | number)[], issues: IssueList): Record<string, HyperValue> | undefined {
  if (value === undefined) return {};
  const where = `jobs[${path[1]}].hyper`;
  if (!isTable(value)) {
    issues.add([...path, 'hyper'], `${where} must be a table like hyper = { rank = 8, lr = 0.001 }, got ${describeValue(value)}`);
    return undefined;
  }
  const before = issues.items.length;
  const entries: [string, HyperValue][] = [];
  for (const key of Object.keys(value)) {
    const item = value[key];
    const at = [...path, 'hyper', key];
    const keyProblem = key === '__proto__' ? 'is a reserved name; rename it' : stringProblem(key);
    if (keyProblem) issues.add(at, `${where} key ${JSON.stringify(key.slice(0, 40))} ${keyProblem}`, 'key');
    else if (typeof item === 'boolean' || (typeof item === 'number' && Number.isFinite(item))) entries.push([key, item]);
    else if (typeof item === 'string') {
      const problem = stringProblem(item, true);
      if (problem) issues.add(at, `${where}.${key} ${problem}`);
      else entries.push([key, item]);
    } else {
      const hint = typeof item === 'bigint' ? '; integers must be within ±9007199254740991' : '';
      issues.add(at, `${where}.${key} must be a string, a finite number or true/false, got ${describeValue(item)}${hint}`);
    }
  }
  if (issues.items.length > before) return undefined;
  const hyper = Object.fromEntries(entries);
  const bytes = utf8ByteLength(JSON.stringify(hyper), MAX_HYPER_JSON_BYTES);
  if (bytes > MAX_HYPER_JSON_BYTES) {
    issues.add([...path, 'hyper'], `${where} is over ${MAX_HYPER_JSON_BYTES / 1024} KiB as JSON; the job gets it in one environment variable (GPU_SHARE_HYPER) — pass large settings in a file instead`);
    return undefined;
  }
  return hyper;
}

export function readJob(value: unknown, index: number, issues: IssueList): JobSpec | null {
  const path = ['jobs', index];
  if (!isTable(value)) {
    issues.add(path, `jobs[${index}] must be a table (a [[jobs]] section of key = value lines), got ${describeValue(value)}`);
    return null;
  }
  const before = issues.items.length;
  const f = new FieldReader(value, path, issues);
  f.unknownKeys(JOB_KEYS, 'a [[jobs]] entry');

  const name = f.string('name', 'every job needs a unique name, e.g. name = "rank8-lr3e-3"');
  if (name !== undefined && (name.trim() === '' || name.length > MAX_JOB_NAME_LENGTH)) {
    f.fail('name', `jobs[${index}].name must be 1 to ${MAX_JOB_NAME_LENGTH} characters and not blank`);
  }
  const command = f.stringList('command', { allowControl: true, check: notEmpty });
  if (command === null || command?.length === 0) {
    const how = 'give the program and its arguments, e.g. command = ["lora_trainer.py", "--steps", "40"]';
    f.fail('command', `jobs[${index}].command is ${command === null ? 'missing' : 'an empty list'}; ${how}`);
  }
  const model = f.string('model', null) ?? '';
  const mode = f.string('mode', null) ?? '';
  const hyper = readHyper(value['hyper'], path, issues);
  const seed = f.number('seed', { min: 0, max: MAX_SEED, integer: true, why: "numpy's seed range" }, 0);
  const requireCuda = f.bool('require_cuda', false);
  const preferCuda = f.bool('prefer_cuda', false);
  const minVramGib = f.number('min_vram_gib', { min: 0 }, 0);
  const minRamGib = f.number('min_ram_gib', { min: 0 }, 0);
  const minCores = f.number('min_cores', { min: 0, integer: true }, 0);
  const allowedHosts = f.stringList('allowed_hosts', { check: nodeNameProblem });
  if (allowedHosts?.length === 0) {
    f.fail('allowed_hosts', `jobs[${index}].allowed_hosts is empty, so the job could run nowhere; remove the key to allow every node`);
  }
  const maxAttempts = f.number('max_attempts', { min: 1, max: 100, integer: true }, 3);
  const dataMb = f.number('data_mb', { min: 0 }, null);
  const mflops = f.number('mflops', { min: 0 }, null);
  for (const [given, other] of [['data_mb', 'mflops'], ['mflops', 'data_mb']] as const) {
    if (f.has(given) && !f.has(other)) {
      f.fail(given, `jobs[${index}].${given} is given without ${other}; the PCIe cost rule needs both estimates — add ${other} or remove ${given}`);
    }
  }
  // A VRAM need on a job that may not use a GPU is almost always a forgotten prefer_cuda: say so rather than
  // silently run the job on a CPU (docs/jobs.md, "min_vram_gib").
  if (minVramGib !== undefined && minVramGib > 0 && requireCuda === false && preferCuda === false) {
    f.fail('min_vram_gib', `jobs[${index}].min_vram_gib is ${minVramGib} but the job neither requires nor prefers CUDA; add prefer_cuda = true (a GPU when one fits, else a CPU) or require_cuda = true, or remove min_vram_gib`);
  }

  if (issues.items.length > before) return null;
  return {
    name: name!,
    command: command!,
    model,
    mode,
    hyper: hyper!,
    seed: seed!,
    requireCuda: requireCuda!,
    preferCuda: preferCuda!,
    minVramGib: minVramGib!,
    minRamGib: minRamGib!,
    minCores: minCores!,
    allowedHosts: allowedHosts!,
    maxAttempts: maxAttempts!,
    dataMb: dataMb!,
    mflops: mflops!,
  };
}

export function readHost(value: unknown, index: number, issues: IssueList): HostPolicy | null {
  const path = ['hosts', index];
  if (!isTable(value)) {
    issues.add(path, `hosts[${index}] must be a table (a [[hosts]] section of key = value lines), got ${describeValue(value)}`);
    return null;
  }
  const before = issues.items.length;
  const f = new FieldReader(value, path, issues);
  f.unknownKeys(HOST_KEYS, 'a [[hosts]] entry');
  const name = f.string('name', 'every [[hosts]] entry names its node, e.g. name = "jetson"');
  if (name !== undefined && nodeNameProblem(name)) f.fail('name', `hosts[${index}].name ${JSON.stringify(name.slice(0, 40))} ${nodeNameProblem(name)}`);
  const allowJobs = f.stringList('allow_jobs', { check: notEmpty });
  const denyJobs = f.stringList('deny_jobs', { check: notEmpty });
  if (issues.items.length > before) return null;
  return { name: name!, allowJobs: allowJobs ?? null, denyJobs: denyJobs ?? [] };
}
