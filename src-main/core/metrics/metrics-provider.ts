/**
 * Reads the live sources (the coordinator's snapshots, the hardware monitor's latest poll) at scrape time and
 * renders them. Nothing runs between scrapes: the monitor polls on its own, the coordinator keeps its state.
 */
import { version } from '../../../package.json';
import type { HardwareSnapshot } from '../../../src-shared/hardware';
import type { LinkMeasurement } from '../../../src-shared/links/link-matrix';
import type { RunSnapshot, WorkerSnapshot } from '../../../src-shared/training';
import type { Clock } from '../../platform/ports';
import { systemClock } from '../../platform/ports';
import { renderMetrics, type BuildInfo } from './render-metrics';

export interface MetricsSources {
  /** CoordinatorService satisfies this. */
  coordinator: { workers(): WorkerSnapshot[]; runs(): RunSnapshot[]; linkSurvey?: { links(): LinkMeasurement[] } };
  /** HardwareMonitor satisfies this. */
  hardware: { current(): HardwareSnapshot | null };
  clock?: Pick<Clock, 'now'>;
  /** Defaults to this package's version and the running Node. */
  build?: Partial<BuildInfo>;
}

export function createMetricsProvider(sources: MetricsSources): () => string {
  const clock = sources.clock ?? systemClock;
  const build: BuildInfo = { version, nodeVersion: process.versions.node, platform: process.platform, arch: process.arch, ...sources.build };
  return () =>
    renderMetrics({
      workers: sources.coordinator.workers(),
      runs: sources.coordinator.runs(),
      hardware: sources.hardware.current(),
      links: sources.coordinator.linkSurvey?.links(),
      now: clock.now(),
      build,
    });
}
