import { z } from 'zod';

/**
 * What each member of a run needs of its machine. Every member holds one adapter slot and, for a GPU run,
 * `gpusPerMember` whole GPUs (all of its node's GPUs when left out) that no job or other run may use meanwhile.
 */
export const runPlacementSchema = z.object({
  /** Only machines with an NVIDIA GPU (CUDA) may be members. */
  requireCuda: z.boolean().optional(),
  /** Each GPU a member holds must offer at least this much usable VRAM (GiB). */
  minVramGib: z.number().nonnegative().max(4096).optional(),
  /** Only these node names may be members. */
  allowedHosts: z.array(z.string().min(1).max(253)).max(256).optional(),
  /** Whole GPUs each member holds (useGpus runs); left out: all of the member node's GPUs. */
  gpusPerMember: z.number().int().min(1).max(64).optional(),
});
export type RunPlacement = z.infer<typeof runPlacementSchema>;
