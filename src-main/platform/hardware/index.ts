/** Hardware detection, nvidia-smi, "this machine" as a node, and the GPU residency probe: the public surface. */
export { locateNvidiaSmi, NVIDIA_SMI_ENV, WINDOWS_NVIDIA_SMI_LOCATIONS, WSL_NVIDIA_SMI } from './locate-nvidia-smi';
export {
  parseQueryGpuCsv,
  queryGpuArgs,
  QUERY_GPU_FIELDS,
  LIVE_GPU_FIELDS,
  QueryGpuParseError,
  type ParsedGpuRow,
} from './query-gpu-csv';
export { queryNvidia, runNvidiaSmi, NOT_FOUND_ON_PATH, NVIDIA_SMI_TIMEOUT_MS, type NvidiaSmiResult } from './nvidia-smi';
export { detectHardware, type DetectOptions, type SystemInfoSource } from './detect-hardware';
export { gpuTypeSlug, isUnifiedNvidiaName } from './gpu-slug';
export { HardwareMonitor, pollLiveHardware, DEFAULT_HARDWARE_POLL_MS, type HardwareMonitorOptions } from './hardware-monitor';
export { hardwareToNode, nodeNameFromHostname, gpuUuidFor, suggestedMaxAdapters } from './this-machine';
export {
  parseComputeApps,
  residencyVerdict,
  probeResidency,
  judgeResidency,
  POLL_WINDOW_SECONDS,
  MIN_USED_MIB,
  COMPUTE_APPS_ARGS,
  type ComputeApp,
  type ResidencyResult,
  type ProbeResidencyOptions,
} from './residency';
export { descendantPids } from './process-tree';
