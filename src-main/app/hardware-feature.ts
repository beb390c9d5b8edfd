/**
 * This machine's hardware for the pages: the monitor polled every `pollMs` (0: never, tests), the latest
 * snapshot the other features read, and the getHardware / getGpuHistory / detectHardware handlers.
 */
import type { HardwareSnapshot } from '../../src-shared/hardware';
import type { EmitEvent, RequestHandlers } from '../../src-shared/ipc';
import { HardwareMonitor } from '../platform/hardware/index';
import type { Clock } from '../platform/ports';

export interface HardwareFeature {
  monitor: HardwareMonitor;
  /** The latest snapshot. */
  current(): HardwareSnapshot;
  /** Reads the hardware again now (the snapshot is kept). */
  refresh(): Promise<HardwareSnapshot>;
  handlers: Pick<RequestHandlers, 'getHardware' | 'getGpuHistory' | 'detectHardware'>;
}

export async function createHardwareFeature(opts: {
  clock: Clock;
  env: NodeJS.ProcessEnv;
  pollMs: number;
  emit: EmitEvent;
  /** After "Detect hardware": the cluster's state changes with it (this machine's node). */
  afterDetect: () => void;
}): Promise<HardwareFeature> {
  const monitor = new HardwareMonitor({ clock: opts.clock, intervalMs: opts.pollMs, env: opts.env });
  let hardware: HardwareSnapshot = await monitor.refresh();
  monitor.subscribe((snapshot) => {
    hardware = snapshot;
    opts.emit('onHardware', snapshot);
  });
  if (opts.pollMs > 0) monitor.start();
  const refresh = async () => (hardware = await monitor.refresh());
  return {
    monitor,
    current: () => hardware,
    refresh,
    handlers: {
      getHardware: async () => hardware,
      getGpuHistory: async () => monitor.gpuHistory(),
      detectHardware: async () => {
        await refresh();
        opts.emit('onHardware', hardware);
        opts.afterDetect();
        return hardware;
      },
    },
  };
}
