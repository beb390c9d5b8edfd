import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DetectedGpu, HardwareSnapshot } from '../../../src-shared/hardware';
import type { Clock } from '../../../src-main/platform/ports';
import { detectHardware } from '../../../src-main/platform/hardware/detect-hardware';
import { HardwareMonitor, pollLiveHardware, type LivePollResult } from '../../../src-main/platform/hardware/hardware-monitor';
import { fakeEnv, fixture, tempDir } from './fake-env';
import { hardwareSnapshot } from '../helpers/snapshots';

/** A clock whose intervals fire only when the test says so. */
class ManualClock implements Clock {
  private intervals = new Map<number, () => void>();
  private next = 1;
  now = () => 0;
  monotonic = () => 0;
  setInterval(fn: () => void) {
    const id = this.next++;
    this.intervals.set(id, fn);
    return { cancel: () => void this.intervals.delete(id) };
  }
  setTimeout(fn: () => void) {
    return this.setInterval(fn);
  }
  tick() {
    for (const fn of [...this.intervals.values()]) fn();
  }
  get active() {
    return this.intervals.size;
  }
}

const gpu: DetectedGpu = {
  index: 0,
  uuid: 'GPU-aaaa',
  name: 'NVIDIA GeForce RTX 4090',
  vendor: 'nvidia',
  typeSlug: 'rtx-4090',
  memoryType: 'discrete',
  vramTotalMb: 24564,
  vramUsedMb: 100,
  vramFreeMb: 24464,
  utilizationPct: 0,
  temperatureC: 40,
  source: 'nvidia-smi',
};
const base: HardwareSnapshot = hardwareSnapshot({ gpus: [gpu] });
const flush = () => new Promise((r) => setTimeout(r, 0));

function setup(polls: ((prev: HardwareSnapshot) => LivePollResult | Promise<LivePollResult>)[]) {
  const clock = new ManualClock();
  let detects = 0;
  let pollCalls = 0;
  const monitor = new HardwareMonitor({
    clock,
    intervalMs: 1000,
    detect: async () => {
      detects++;
      return { ...base, tookMs: detects };
    },
    poll: async (prev) => {
      const next = polls[Math.min(pollCalls, polls.length - 1)]!;
      pollCalls++;
      return next(prev);
    },
  });
  const seen: HardwareSnapshot[] = [];
  monitor.subscribe((s) => seen.push(s));
  return { clock, monitor, seen, counts: () => ({ detects, polls: pollCalls }) };
}
const live = (over: Partial<HardwareSnapshot>, gpuOver: Partial<DetectedGpu> = {}) => (prev: HardwareSnapshot): LivePollResult => ({
  snapshot: { ...prev, ...over, gpus: prev.gpus.map((g) => ({ ...g, ...gpuOver })) },
  gpuSetChanged: false,
});

describe('HardwareMonitor', () => {
  it('refresh() runs a full detection, keeps it as current() and tells subscribers', async () => {
    const { monitor, seen, counts } = setup([live({})]);
    expect(monitor.current()).toBeNull();
    const s = await monitor.refresh();
    expect(monitor.current()).toBe(s);
    expect(seen).toEqual([s]);
    expect(counts().detects).toBe(1);
  });

  it('concurrent refresh() calls share one detection', async () => {
    const { monitor, counts } = setup([live({})]);
    const [a, b] = await Promise.all([monitor.refresh(), monitor.refresh()]);
    expect(a).toBe(b);
    expect(counts().detects).toBe(1);
  });

  it('polls on each tick while started, and notifies only on change', async () => {
    const { clock, monitor, seen, counts } = setup([
      live({}), // nothing changed
      live({}, { vramUsedMb: 9000, vramFreeMb: 15564 }), // GPU memory moved
      live({ ramAvailableMb: 20010 }, { vramUsedMb: 9000, vramFreeMb: 15564 }), // RAM drift below 64 MB
      live({ ramAvailableMb: 19000 }, { vramUsedMb: 9000, vramFreeMb: 15564 }), // RAM moved 1000 MB
    ]);
    await monitor.refresh();
    monitor.start();
    monitor.start(); // idempotent: still one timer
    expect(clock.active).toBe(1);
    for (let i = 0; i < 4; i++) {
      clock.tick();
      await flush();
    }
    expect(counts().polls).toBe(4);
    expect(seen.map((s) => [s.gpus[0]!.vramUsedMb, s.ramAvailableMb])).toEqual([
      [100, 20000],
      [9000, 20000],
      [9000, 19000],
    ]);
    monitor.stop();
    expect(clock.active).toBe(0);
  });

  it('keeps the latest values in current() even when it does not notify', async () => {
    const { clock, monitor, seen } = setup([live({ ramAvailableMb: 20010 })]);
    await monitor.refresh();
    monitor.start();
    clock.tick();
    await flush();
    expect(seen).toHaveLength(1);
    expect(monitor.current()!.ramAvailableMb).toBe(20010);
  });

  it('never runs two polls at once: a tick during a slow poll is skipped', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { clock, monitor, counts } = setup([
      async (prev) => {
        await gate;
        return live({}, { vramUsedMb: 5 })(prev);
      },
    ]);
    await monitor.refresh();
    monitor.start();
    clock.tick();
    clock.tick();
    clock.tick();
    await flush();
    expect(counts().polls).toBe(1);
    release();
    await flush();
    await flush();
    expect(monitor.current()!.gpus[0]!.vramUsedMb).toBe(5);
    clock.tick();
    await flush();
    expect(counts().polls).toBe(2);
  });

  it('detects again when the GPU set changed', async () => {
    const { clock, monitor, counts } = setup([(prev) => ({ snapshot: prev, gpuSetChanged: true })]);
    await monitor.refresh();
    monitor.start();
    clock.tick();
    await flush();
    await flush();
    expect(counts().detects).toBe(2);
  });

  it('the first tick without a snapshot is a full detection', async () => {
    const { clock, monitor, counts, seen } = setup([live({})]);
    monitor.start();
    clock.tick();
    await flush();
    await flush();
    expect(counts()).toEqual({ detects: 1, polls: 0 });
    expect(seen).toHaveLength(1);
  });

  it('discards a poll that finishes after stop()', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { clock, monitor, seen } = setup([
      async (prev) => {
        await gate;
        return live({}, { vramUsedMb: 7777 })(prev);
      },
    ]);
    await monitor.refresh();
    monitor.start();
    clock.tick();
    monitor.stop();
    release();
    await flush();
    await flush();
    expect(seen).toHaveLength(1);
    expect(monitor.current()!.gpus[0]!.vramUsedMb).toBe(100);
  });

  it('a listener that throws does not stop the others; unsubscribe works', async () => {
    const { monitor } = setup([live({})]);
    const got: number[] = [];
    monitor.subscribe(() => {
      throw new Error('broken listener');
    });
    const off = monitor.subscribe(() => got.push(1));
    await monitor.refresh();
    off();
    await monitor.refresh(); // same values: no notification anyway
    expect(got).toEqual([1]);
  });
});

describe('pollLiveHardware through the fake nvidia-smi', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => cleanups.splice(0).forEach((c) => c()));

  it('updates used memory from one cheap nvidia-smi call, and marks NVIDIA unavailable when the driver breaks', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const capture = path.join(dir, 'capture.txt');
    const log = path.join(dir, 'calls.log');
    writeFileSync(capture, readFileSync(fixture('query-gpu-csv-header-units-consumer-x3.txt')));
    const env = fakeEnv({ queryGpu: capture, log });
    const first = await detectHardware({ env, si: { graphics: async () => ({ controllers: [] }) } });
    expect(first.gpus.map((g) => g.vramUsedMb)).toEqual([754, 586, 641]);

    writeFileSync(capture, readFileSync(capture, 'utf8').replace('754 MiB', '5000 MiB'));
    const { snapshot, gpuSetChanged } = await pollLiveHardware(first, { env });
    expect(gpuSetChanged).toBe(false);
    expect(snapshot.gpus.map((g) => g.vramUsedMb)).toEqual([5000, 586, 641]);
    expect(snapshot.gpus[0]!.vramTotalMb).toBe(8119);
    const calls = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { args: string[] });
    expect(calls.at(-1)!.args).toEqual(['--query-gpu=index,uuid,memory.used,memory.free,utilization.gpu,temperature.gpu', '--format=csv,noheader,nounits']);

    const broken = await pollLiveHardware(first, { env: fakeEnv({ exit: 18, stdout: fixture('error-nvml-driver-library-mismatch.txt') }) });
    expect(broken.snapshot.nvidia.available).toBe(false);
    expect(broken.snapshot.nvidia.reason).toMatch(/Driver\/library version mismatch/);
    expect(broken.snapshot.gpus.map((g) => g.vramUsedMb)).toEqual([null, null, null]);

    const fewer = path.join(dir, 'one.txt');
    writeFileSync(fewer, readFileSync(capture, 'utf8').split('\n').slice(0, 2).join('\n'));
    expect((await pollLiveHardware(first, { env: fakeEnv({ queryGpu: fewer }) })).gpuSetChanged).toBe(true);
  });
});
