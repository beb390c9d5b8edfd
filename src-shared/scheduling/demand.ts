/**
 * How much VRAM a job is placed on: the declared guess until a job of the same model and mode has been measured,
 * then that measured peak with 10 % headroom (the ledger's point: measurements replace guesses).
 */
import type { JobSpec } from '../jobs/types';

export const MB_PER_GIB = 1024;

/** VRAM a job is placed on: its measured peak for the same model+mode × 1.1 (rounded up, MB) when known, else min_vram_gib × 1024. */
export function jobVramDemandMb(spec: JobSpec, measuredPeakMb: number | null): { mb: number; basis: 'declared' | 'measured' } {
  if (measuredPeakMb !== null && Number.isFinite(measuredPeakMb) && measuredPeakMb > 0) {
    // × 11 / 10 rather than × 1.1: 1000 × 1.1 is 1100.0000000000002 in floating point, which would round up to 1101.
    return { mb: Math.ceil((measuredPeakMb * 11) / 10), basis: 'measured' };
  }
  return { mb: Math.ceil(spec.minVramGib * MB_PER_GIB), basis: 'declared' };
}
