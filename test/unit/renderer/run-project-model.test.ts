/** How a run's project and output read on its page. */
import { describe, expect, it } from 'vitest';
import { dataText, fetchedFraction, memberBadge, outputFileName, snapshotSizeText } from '../../../src-renderer/features/runs/run-project-model';
import { artifactFileName, producedByText } from '../../../src-renderer/features/jobs/job-format';

const SHA = 'ab12cd34ef56'.padEnd(64, '0');

describe('run project model', () => {
  it('reads the progress a fetching member reports, and none otherwise', () => {
    expect(fetchedFraction({ workerId: 1, node: 'beta', status: 'fetching', detail: 'fetching the project: 3 of 12 MiB' })).toBeCloseTo(0.25);
    expect(fetchedFraction({ workerId: 1, node: 'beta', status: 'fetching', detail: 'fetched 512 KiB of 2 MiB from the coordinator' })).toBeCloseTo(0.25);
    expect(fetchedFraction({ workerId: 1, node: 'beta', status: 'fetching', detail: 'checking python modules' })).toBe(null);
    expect(fetchedFraction({ workerId: 1, node: 'beta', status: 'ready', detail: '3 of 12 MiB' })).toBe(null);
  });

  it('badges a failed member with its reason', () => {
    expect(memberBadge({ workerId: 2, node: 'gamma', status: 'failed', detail: "python cannot import 'sentencepiece'" })).toEqual({ tone: 'bad', text: 'Failed', detail: "python cannot import 'sentencepiece'" });
  });

  it('says what the snapshot holds and names the output file', () => {
    expect(snapshotSizeText({ files: 1, bytes: 2048 })).toBe('1 file · 2.0 KiB');
    expect(dataText({ data: 'data', dataMode: 'shard' })).toMatch(/^data\/ \(shard/);
    expect(dataText({ data: null, dataMode: 'replicate' })).toBe('none');
    expect(outputFileName('my run/1', { sha256: SHA, partial: true })).toBe('my-run-1-output-ab12cd34ef56-partial.tar.gz');
  });

  it('lists a run artifact with its run in the Artifacts view', () => {
    const artifact = { sha256: SHA, producedBy: [], runs: [{ runId: 'r3', runName: 'proj', partial: true }] };
    expect(producedByText(artifact)).toBe('run r3 · proj (partial: stopped before it finished)');
    expect(artifactFileName(artifact)).toBe('proj-ab12cd34ef56.tar.gz');
  });
});
