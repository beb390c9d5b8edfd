/**
 * `gpu-share runs start`'s options → the RunSpec the app's Start run form sends. Checked here with the same
 * schema the coordinator uses (runSpecSchema), so a mistake names the flag, not the API's field.
 */
import path from 'node:path';
import { readCommChoice } from '../../../../src-shared/runs/comm-text';
import { EXAMPLE_RUN_NAME, EXAMPLE_TRAINER_ARGS } from '../../../../src-shared/runs/example-run';
import { DEFAULT_MAX_WORKERS, runSpecSchema, type RunSpecInput } from '../../../../src-shared/worker-protocol';
import { findAssetsDir } from '../../../platform/assets-dir';
import { intOption, UsageError } from '../../command';

export const runSpecOptions = {
  name: { type: 'string' },
  samples: { type: 'string' },
  'min-workers': { type: 'string' },
  'max-workers': { type: 'string' },
  'heartbeat-timeout': { type: 'string' },
  'max-restarts': { type: 'string' },
  'nproc-per-node': { type: 'string' },
  gpus: { type: 'boolean' },
  launcher: { type: 'string' },
  env: { type: 'string', multiple: true },
  example: { type: 'boolean' },
  comm: { type: 'string' },
  'local-sgd-period': { type: 'string' },
  project: { type: 'string' },
  data: { type: 'string' },
  'data-mode': { type: 'string' },
  'python-check': { type: 'string' },
} as const;

export const RUN_SPEC_USAGE = `Run options (as in the app's Start run form):
  --name NAME              shown in the app and in \`runs list\` (default "training run")
  --samples N              dataset size in samples, split over the workers (required, unless --example)
  --min-workers N          below this many the run waits or pauses (default 1)
  --max-workers N          at most this many train (default ${DEFAULT_MAX_WORKERS})
  --heartbeat-timeout S    ignored, with a note: the heartbeat timeout is the cluster's now
                           (gpu-share serve --heartbeat-timeout S)
  --max-restarts N         restarts after failures before the run fails (default 3)
  --nproc-per-node N|gpu   processes per machine; gpu = one per visible GPU (default 1)
  --gpus                   train on GPUs (sets CUDA_VISIBLE_DEVICES, checks GPU residency)
  --launcher torchrun|direct  torchrun (default) or the command as it is, one process per machine
  --env KEY=VALUE          extra environment for the training processes (repeatable)
  --comm auto|ddp|fp16|powersgd|local-sgd
                           how members exchange gradients (default auto: chosen per generation
                           from the measured links; powersgd without --gpus needs torch 2+
                           on every member, else it trains with fp16 and says why)
  --local-sgd-period N     with --comm local-sgd: steps between model averages (1-1000;
                           default: the shortest that keeps communication within 10 % of a step)
  --example                the bundled DDP example trainer (300 steps, 10000 samples, up to ${DEFAULT_MAX_WORKERS} workers)
  --project DIR            ship the folder DIR (on this machine) to every member: SCRIPT is relative
                           to it and runs there; .gitignore and .gpushareignore are honoured
                           (at most 512 MiB, 50,000 files)
  --data SUBDIR            with --project: the data folder inside DIR (GPU_SHARE_DATA_DIR)
  --data-mode replicate|shard  replicate (default): every member gets all of --data; shard:
                           its files are split over the members (GPU_SHARE_DATA_FILES)
  --python-check MOD,MOD   modules every member's Python must import before it trains (besides
                           the project's requirements.txt)`;

export type RunSpecValues = {
  [K in keyof typeof runSpecOptions]?: (typeof runSpecOptions)[K] extends { multiple: true } ? string[] : (typeof runSpecOptions)[K]['type'] extends 'boolean' ? boolean : string;
};

/**
 * Printed when `runs start` is given --heartbeat-timeout. Kept as an accepted flag (scripts written for one run
 * at a time keep working) rather than refused: the timeout it set is now the cluster's, for every machine.
 */
export const HEARTBEAT_TIMEOUT_NOTE =
  "note: --heartbeat-timeout is ignored: the heartbeat timeout is the cluster's now, the same for every machine whatever it runs; set it where the coordinator starts (gpu-share serve --heartbeat-timeout S)";

/** Flag names of the spec's fields, for messages. */
const FLAG_OF: Record<string, string> = {
  name: '--name',
  command: 'the training command',
  samples: '--samples',
  minWorkers: '--min-workers',
  maxWorkers: '--max-workers',
  maxRestarts: '--max-restarts',
  nprocPerNode: '--nproc-per-node',
  launcher: '--launcher',
  env: '--env',
  comm: '--comm',
  localSgdPeriod: '--local-sgd-period',
  project: '--project',
  data: '--data',
  dataMode: '--data-mode',
  pythonCheck: '--python-check',
};

/** --project DIR (absolute, from `cwd`), --data, --data-mode, --python-check as the spec's project fields. */
function projectFields(values: RunSpecValues, cwd: string): Partial<RunSpecInput> {
  if (values.project === undefined) {
    const stray = (['data', 'data-mode', 'python-check'] as const).find((k) => values[k] !== undefined);
    if (stray) throw new UsageError(`--${stray} goes with --project DIR: the data folder and the checks are part of a project`);
    return {};
  }
  const mode = values['data-mode'];
  if (mode !== undefined && mode !== 'replicate' && mode !== 'shard') throw new UsageError(`--data-mode must be replicate or shard, got "${mode}"`);
  const modules = values['python-check']?.split(',').map((m) => m.trim()).filter((m) => m !== '');
  return {
    project: path.resolve(cwd, values.project),
    ...(values.data !== undefined ? { data: values.data.replace(/\/+$/, '') } : {}),
    ...(mode !== undefined ? { dataMode: mode } : {}),
    ...(modules !== undefined ? { pythonCheck: modules } : {}),
  };
}

/** The bundled example, as the app pre-fills its form (the trainer's path is this machine's, like the app's). */
function exampleSpec(env: NodeJS.ProcessEnv): RunSpecInput {
  const trainer = path.join(findAssetsDir(env), 'trainers', 'ddp_example.py');
  return { name: EXAMPLE_RUN_NAME, command: [trainer, ...EXAMPLE_TRAINER_ARGS], samples: 10_000, maxWorkers: DEFAULT_MAX_WORKERS };
}

function envPairs(pairs: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--env takes KEY=VALUE, got "${pair}"`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

/**
 * The spec for `values` and the training command (`gpu-share runs start [options] -- SCRIPT ARGS…`); `cwd`
 * resolves --project DIR (the coordinator reads it as an absolute path on this machine).
 */
export function runSpecFrom(values: RunSpecValues, command: readonly string[], env: NodeJS.ProcessEnv, cwd: string = process.cwd()): RunSpecInput {
  if (values.example && command.length > 0) throw new UsageError('give either --example or a training command, not both');
  const base: Partial<RunSpecInput> = values.example ? exampleSpec(env) : {};
  if (!values.example && command.length === 0) {
    throw new UsageError('give the training command: gpu-share runs start [options] -- SCRIPT [ARGS…] (a path on the workers), or --example');
  }
  if (!values.example && values.samples === undefined) {
    throw new UsageError('--samples N is required: the dataset size, split over the workers into shards (GPU_SHARE_SHARD_START/END)');
  }
  const nproc = values['nproc-per-node'];
  const comm = readCommChoice(values.comm, values['local-sgd-period']);
  if (!comm.ok) throw new UsageError(`${comm.field === 'comm' ? '--comm' : '--local-sgd-period'}: ${comm.message.replace('drop the period or choose local-sgd', 'drop --local-sgd-period or add --comm local-sgd')}`);
  const spec = {
    ...base,
    ...(values.name !== undefined ? { name: values.name } : {}),
    command: command.length > 0 ? [...command] : base.command!,
    samples: intOption(values.samples, 'samples', base.samples ?? 0, 1, Number.MAX_SAFE_INTEGER),
    ...(values['min-workers'] !== undefined ? { minWorkers: intOption(values['min-workers'], 'min-workers', 1, 1, 100_000) } : {}),
    ...(values['max-workers'] !== undefined ? { maxWorkers: intOption(values['max-workers'], 'max-workers', DEFAULT_MAX_WORKERS, 1, 100_000) } : {}),
    ...(values['max-restarts'] !== undefined ? { maxRestarts: intOption(values['max-restarts'], 'max-restarts', 3, 0, 1000) } : {}),
    ...(nproc !== undefined ? { nprocPerNode: nproc === 'gpu' ? ('gpu' as const) : intOption(nproc, 'nproc-per-node', 1, 1, 64) } : {}),
    ...(values.gpus ? { useGpus: true } : {}),
    ...(values.launcher !== undefined ? { launcher: values.launcher as RunSpecInput['launcher'] } : {}),
    ...(values.env ? { env: envPairs(values.env) } : {}),
    ...(values.comm !== undefined ? { comm: comm.comm } : {}),
    ...(comm.localSgdPeriod !== undefined ? { localSgdPeriod: comm.localSgdPeriod } : {}),
    ...projectFields(values, cwd),
  };
  const checked = runSpecSchema.safeParse(spec);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const field = String(issue.path[0] ?? '');
    if (issue.code === 'custom' && field === 'minWorkers') {
      throw new UsageError(`--min-workers (${String(spec.minWorkers ?? 1)}) is more than --max-workers (${String(spec.maxWorkers ?? DEFAULT_MAX_WORKERS)})`);
    }
    const what = field === 'launcher' ? 'must be torchrun or direct' : issue.message;
    throw new UsageError(`${FLAG_OF[field] ?? field}: ${what}`);
  }
  return spec;
}
