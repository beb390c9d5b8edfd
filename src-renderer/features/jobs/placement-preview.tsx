/**
 * Where a pending job could go, one line per node: ✓ with where it would land, or ✗ with the reason as the
 * placement gave it ("jetson: needs 16 GiB VRAM, 4.8 GiB usable left"). Marks carry words for screen readers.
 */
import type { PlacementPreview } from '../../../src-shared/jobs/types';

export function PlacementPreviewList({ preview, jobName }: { preview: PlacementPreview | undefined; jobName: string }) {
  if (!preview || preview.verdicts.length === 0) {
    return (
      <p className="muted small" data-testid="placement-preview-empty">
        No node to place it on yet: declare nodes in cluster.yaml or let workers join.
      </p>
    );
  }
  return (
    <ul className="placement-preview" aria-label={`Where ${jobName} could run`} data-testid="placement-preview">
      {preview.verdicts.map((v) => (
        <li key={v.node} data-node={v.node} data-ok={v.ok ? 'true' : 'false'} className={v.ok ? 'verdict-ok' : 'verdict-no'}>
          <span className="verdict-mark" aria-hidden="true">
            {v.ok ? '✓' : '✗'}
          </span>
          <span className="visually-hidden">{v.ok ? 'fits: ' : 'does not fit: '}</span>
          <span className="verdict-reason">{v.reason}</span>
        </li>
      ))}
    </ul>
  );
}
