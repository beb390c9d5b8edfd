/**
 * entrenar's GPU dispatch cost model (the "5× PCIe rule"): send work to a GPU only when its compute time
 * clearly outweighs the cost of moving its data over PCIe; small jobs finish sooner on the CPU.
 */

export interface GpuCostModel {
  /** PCIe transfer cost per MB, microseconds (PCIe 4.0 ≈ 25 GB/s ≈ 40 µs/MB). */
  pcieCostPerMb: number;
  /** GPU compute cost per MFLOP, microseconds (an RTX 4090 at ≈ 80 TFLOPS ≈ 0.01 µs/MFLOP). */
  gpuComputePerMflop: number;
  /** Compute must exceed this multiple of the transfer cost. */
  dispatchThreshold: number;
}

export const DEFAULT_GPU_COST_MODEL: Readonly<GpuCostModel> = Object.freeze({
  pcieCostPerMb: 40,
  gpuComputePerMflop: 0.01,
  dispatchThreshold: 5,
});

/** True when compute time is more than `dispatchThreshold` times the transfer time (strictly: the crossover stays on the CPU). */
export function shouldDispatchGpu(
  dataMb: number,
  computeMflops: number,
  model: Readonly<GpuCostModel> = DEFAULT_GPU_COST_MODEL,
): boolean {
  const transferCost = dataMb * model.pcieCostPerMb;
  const computeCost = computeMflops * model.gpuComputePerMflop;
  return computeCost > model.dispatchThreshold * transferCost;
}
