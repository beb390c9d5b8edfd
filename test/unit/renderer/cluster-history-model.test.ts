// The Over time view's lines (issue 25, cluster over time): a line per machine in percent, x in seconds before now,
// the last point drawn on to its minute's end so a machine heard for one minute still shows.
import { describe, expect, it } from 'vitest';
import { emptyClusterHistory, type ClusterHistoryPoint } from '../../../src-shared/cluster/cluster-history';
import { agoLabel, metricSeries } from '../../../src-renderer/features/cluster/cluster-history-model';

const T0 = Date.UTC(2026, 11, 7, 12, 0, 0);
const point = (at: number, extra: Partial<ClusterHistoryPoint> = {}): ClusterHistoryPoint => ({
  at, cpuPct: 50, ramUsedMb: 1000, ramTotalMb: 4000, gpuUtilPct: null, gpuMemUsedMb: null, gpuMemTotalMb: null, ...extra,
});

describe('metricSeries', () => {
  it('a line per machine that said it, in percent, drawn to its last minute\'s end or now', () => {
    const history = { ...emptyClusterHistory(), nodes: [
      { node: 'alpha', points: [point(T0), point(T0 + 60_000, { cpuPct: 70 })] },
      { node: 'beta', points: [point(T0 + 60_000, { gpuUtilPct: 90, gpuMemUsedMb: 2000, gpuMemTotalMb: 8000 })] },
    ] };
    const now = T0 + 90_000;
    const cpu = metricSeries(history, 'cpu', now);
    expect(cpu.map((s) => s.label)).toEqual(['alpha', 'beta']);
    expect(cpu[0]).toMatchObject({ xs: [-90, -30, 0], ys: [50, 70, 70] });
    expect(metricSeries(history, 'ram', now)[1]).toMatchObject({ xs: [-30, 0], ys: [25, 25] });
    const gpuMem = metricSeries(history, 'gpuMem', now);
    expect(gpuMem).toHaveLength(1);
    expect(gpuMem[0]).toMatchObject({ key: 'beta', ys: [25, 25] });
    expect(metricSeries(history, 'cpu', T0 + 300_000)[0]!.xs).toEqual([-300, -240, -180]);
  });

  it('labels the axis in minutes and hours before now', () => {
    expect([0, -20, -300, -3600, -7800].map(agoLabel)).toEqual(['now', 'now', '−5 min', '−1 h', '−2 h 10 min']);
  });
});
