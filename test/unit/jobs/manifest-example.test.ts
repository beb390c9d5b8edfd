/**
 * The shipped example sweep (assets/examples/lora-sweep.toml): it parses, its 8 jobs have 8 distinct ids, and
 * every job fits the example cluster (assets/examples/cluster.yaml) under the real placement code.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { manifestJobs } from '../../../src-main/core/jobs/manifest/index';
import { parseClusterYaml } from '../../../src-shared/cluster/index';
import { jobVramDemandMb, placeJobs, type PendingJob } from '../../../src-shared/scheduling/index';
import { matchingCluster } from '../scheduling/builders';
import { parseOk } from './manifest-helpers';

const SWEEP = readFileSync(new URL('../../../assets/examples/lora-sweep.toml', import.meta.url), 'utf8');
const CLUSTER = readFileSync(new URL('../../../assets/examples/cluster.yaml', import.meta.url), 'utf8');

describe('assets/examples/lora-sweep.toml', () => {
  const manifest = parseOk(SWEEP);
  const jobs = manifestJobs(manifest);
  const pending: PendingJob[] = jobs.map(({ id, spec }) => ({ id, spec, vramMb: jobVramDemandMb(spec, null).mb }));
  const cluster = parseClusterYaml(CLUSTER);
  if (!cluster.ok) throw new Error('the example cluster.yaml does not parse');
  const nodes = matchingCluster(cluster.config.nodes, manifest.hosts);

  it('is 8 LoRA adapters, ranks 4–32 × two learning rates, with 8 distinct ids', () => {
    expect(jobs).toHaveLength(8);
    expect(new Set(jobs.map((j) => j.id)).size).toBe(8);
    expect(new Set(jobs.map((j) => `${j.spec.hyper.rank}@${j.spec.hyper.lr}`)).size).toBe(8);
    for (const { spec } of jobs) {
      expect(spec).toMatchObject({ model: 'tiny-gpt', mode: 'lora' });
      expect(spec.command[0]).toBe('lora_trainer.py');
    }
    expect(manifest.placement).toBe('binpack');
  });

  it('every job fits some node of the example cluster on its own', () => {
    for (const job of pending) {
      const { placements, previews } = placeJobs([job], nodes, []);
      expect(placements, `${job.spec.name}: ${JSON.stringify(previews)}`).toHaveLength(1);
    }
  });

  it('the rank-32 jobs take a GPU and the small rank-4 jobs a CPU (the 5× PCIe rule)', () => {
    const where = (name: string) => {
      const job = pending.find((p) => p.spec.name === name)!;
      return placeJobs([job], nodes, []).placements[0]!;
    };
    expect(where('r32-lr1e-3').gpuIndex).not.toBeNull();
    expect(where('r4-lr1e-3')).toMatchObject({ node: 'cpu-box', gpuIndex: null });
  });

  it('all at once: the 5 slots fill and the other 3 wait, each with a reason per node', () => {
    const { placements, previews } = placeJobs(pending, nodes, []);
    expect(placements).toHaveLength(5);
    const perNode = new Map<string, number>();
    for (const p of placements) perNode.set(p.node, (perNode.get(p.node) ?? 0) + 1);
    expect(Object.fromEntries(perNode)).toEqual({ desktop: 3, jetson: 1, 'cpu-box': 1 });
    expect(previews).toHaveLength(3);
    for (const preview of previews) {
      expect(preview.verdicts).toHaveLength(3);
      for (const verdict of preview.verdicts) expect(verdict.reason).toMatch(new RegExp(`^${verdict.node}: .+`));
    }
  });
});
