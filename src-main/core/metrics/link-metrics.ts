/**
 * The measured links as metric families (issue 16, item 1): bandwidth and round-trip time per ordered pair of
 * workers, labelled with the node names (from, to), so a dashboard can show the slow link a run trains over.
 * A failed probe has no sample (its error is in /v1/state). docs/api.md lists them with the others.
 */
import type { LinkMeasurement } from '../../../src-shared/links/link-matrix';
import { family, type Labels, type MetricFamily } from './exposition';

export function linkFamilies({ links }: { links?: readonly LinkMeasurement[] }): MetricFamily[] {
  const all = links ?? [];
  const id = (l: LinkMeasurement): Labels => ({ from: l.from, to: l.to });
  return [
    family('gpu_share_link_bandwidth_mbps', 'gauge', 'Measured bandwidth from one worker to another, megabits per second.', all.map((l) => [id(l), l.mbps])),
    family('gpu_share_link_rtt_ms', 'gauge', 'Measured round-trip time between two workers (the least of a few pings), milliseconds.', all.map((l) => [id(l), l.rttMs])),
  ];
}
