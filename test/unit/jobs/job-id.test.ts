/** Job ids: the same training keeps its id across reformatting, reordering and renaming; a different one does not. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { jobId, manifestJobs } from '../../../src-main/core/jobs/manifest/index';
import { JOB_ID_PATTERN } from '../../../src-shared/jobs/job-protocol';
import { parseOk } from './manifest-helpers';

const BASE = `
[[jobs]]
name = "r8"
command = ["lora_trainer.py", "--steps", "40"]
model = "tiny-gpt"
mode = "lora"
seed = 3
hyper = { rank = 8, lr = 1e-3, bias = false, note = "x" }
`;

function onlyId(text: string): string {
  const jobs = manifestJobs(parseOk(text));
  expect(jobs).toHaveLength(1);
  return jobs[0]!.id;
}

describe('jobId', () => {
  const base = onlyId(BASE);

  it('is 64 lowercase hex digits: the sha256 of the canonical definition', () => {
    expect(base).toMatch(JOB_ID_PATTERN);
    const canonical = '{"command":["lora_trainer.py","--steps","40"],"hyper":{"bias":false,"lr":0.001,"note":"x","rank":8},"mode":"lora","model":"tiny-gpt","seed":3}';
    expect(base).toBe(createHash('sha256').update(canonical).digest('hex'));
  });

  it('is the same whatever the key order, layout, comments or number spelling', () => {
    const rewritten = `
# the same job, written differently
[[jobs]]
seed = 3          # seed first
mode = 'lora'
model = "tiny-gpt"
command = [
  "lora_trainer.py",   # trainer
  "--steps",
  "40",
]
name = "r8"

[jobs.hyper]
note = "x"
rank = 8
bias = false
lr = 0.001
`;
    expect(onlyId(rewritten)).toBe(base);
    expect(onlyId(BASE.replace('rank = 8, lr = 1e-3', 'lr = 1.0e-3, rank = 8'))).toBe(base);
  });

  it('ignores what does not define the training: name, constraints, attempts, estimates', () => {
    const relaxed = BASE.replace('name = "r8"', 'name = "renamed"') + 'prefer_cuda = true\nmin_vram_gib = 2\nmin_cores = 4\nallowed_hosts = ["desktop"]\nmax_attempts = 9\ndata_mb = 1\nmflops = 2\n';
    expect(onlyId(relaxed)).toBe(base);
  });

  it('changes with any defining field', () => {
    const variants = [
      BASE.replace('seed = 3', 'seed = 4'),
      BASE.replace('rank = 8', 'rank = 16'),
      BASE.replace('rank = 8', 'rank = "8"'),
      BASE.replace('bias = false', 'bias = true'),
      BASE.replace(', note = "x"', ''),
      BASE.replace('"40"', '"41"'),
      BASE.replace('"--steps", "40"', '"40", "--steps"'),
      BASE.replace('model = "tiny-gpt"', 'model = "tiny-gpt2"'),
      BASE.replace('mode = "lora"', 'mode = "full"'),
    ];
    const ids = variants.map(onlyId);
    expect(new Set([base, ...ids]).size).toBe(variants.length + 1);
  });

  it('does not confuse where a string ends: ["a b"] and ["a", "b"] differ', () => {
    const spec = manifestJobs(parseOk(BASE))[0]!.spec;
    expect(jobId({ ...spec, command: ['a b'] })).not.toBe(jobId({ ...spec, command: ['a', 'b'] }));
    expect(jobId({ ...spec, model: 'a', mode: 'b' })).not.toBe(jobId({ ...spec, model: 'ab', mode: '' }));
  });

  it('manifestJobs keeps manifest order', () => {
    const text = `${BASE}\n[[jobs]]\nname = "b"\ncommand = ["x"]\n[[jobs]]\nname = "a"\ncommand = ["y"]\n`;
    expect(manifestJobs(parseOk(text)).map((j) => j.spec.name)).toEqual(['r8', 'b', 'a']);
  });
});
