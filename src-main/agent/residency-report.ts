/**
 * The residency verdict of a run as the report the agent sends: a probe that throws is a 'fail' verdict with
 * the reason, never an exception, because "we could not tell" must reach the coordinator as loudly as "no".
 */
import type { Report } from '../../src-shared/worker-protocol';
import { locateNvidiaSmi } from '../platform/hardware/locate-nvidia-smi';
import type { ProbeResidencyOptions, ResidencyResult } from '../platform/hardware/residency';

export type ResidencyReport = Extract<Report, { type: 'residency' }>;

export async function residencyReport(
  ids: { runId: string; generation: number },
  pid: number,
  probe: (opts: ProbeResidencyOptions) => Promise<ResidencyResult>,
  env: NodeJS.ProcessEnv,
): Promise<ResidencyReport> {
  const result = await probe({ pid, nvidiaSmiPath: locateNvidiaSmi(env), env }).catch((error: unknown): ResidencyResult => ({
    status: 'fail',
    detail: `NOT on the GPU: the probe failed: ${error instanceof Error ? error.message : String(error)}`,
    pid,
    usedMib: null,
  }));
  return {
    type: 'residency',
    runId: ids.runId,
    generation: ids.generation,
    status: result.status,
    detail: result.detail.slice(0, 2000),
    pid: result.pid > 0 ? result.pid : pid,
    usedMib: result.usedMib,
  };
}
