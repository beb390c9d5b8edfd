/**
 * This machine's GPU history while a view shows it: the main process's last minutes first (so a view opened
 * now still has them, and again after a reconnect), then every live snapshot appended as it arrives. A core
 * that cannot answer the history request still gets a chart, built from the live snapshots alone.
 */
import { useEffect, useState } from 'react';
import { appendGpuSample, emptyGpuHistory, type GpuHistory, type HardwareSnapshot } from '../../../src-shared/hardware';
import type { GpuShareApi } from '../../../src-shared/ipc';

/** How often the chart slides left while no new sample arrives. */
const TICK_MS = 1000;

export interface LiveGpuHistory {
  history: GpuHistory;
  /** Page time (Date.now) the newest sample arrived; see chartEnd. */
  receivedAt: number;
  /** Page time now, advanced every TICK_MS. */
  now: number;
}

export function useGpuHistory(api: Pick<GpuShareApi, 'getGpuHistory'>, hardware: HardwareSnapshot | null, connectionOpens: number): LiveGpuHistory {
  const [live, setLive] = useState<Omit<LiveGpuHistory, 'now'>>(() => ({ history: emptyGpuHistory(), receivedAt: Date.now() }));
  const [now, setNow] = useState(() => Date.now());

  useEffect(() => {
    let current = true;
    api.getGpuHistory().then(
      (history) => {
        if (current) setLive({ history, receivedAt: Date.now() });
      },
      () => undefined, // an older core without the request: the live snapshots alone make the chart
    );
    return () => {
      current = false;
    };
  }, [api, connectionOpens]);

  useEffect(() => {
    if (!hardware) return;
    const at = Date.parse(hardware.detectedAt);
    if (!Number.isFinite(at)) return;
    setLive((prev) => {
      const newest = prev.history.times[prev.history.times.length - 1];
      // Already in the fetched history (or older than it): nothing new to draw.
      if (newest !== undefined && at <= newest) return prev;
      return { history: appendGpuSample(prev.history, hardware, at), receivedAt: Date.now() };
    });
  }, [hardware]);

  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), TICK_MS);
    return () => clearInterval(timer);
  }, []);

  return { ...live, now: Math.max(now, live.receivedAt) };
}
