// The pages' side of the measured links (issue 16): getLinks answers the survey's list, onLinks goes out only
// when a change of the feed really changed the links (the survey reports through the workers change), and
// measureLinks waits for the survey's on-demand round and answers every link known then.
import { describe, expect, it } from 'vitest';
import type { EventMethod, EventPayloads } from '../../../src-shared/ipc';
import type { LinkMeasurement } from '../../../src-shared/links/link-matrix';
import type { CoordinatorChange } from '../../../src-main/core/coordinator/service/coordinator-service';
import { createLinksFeature } from '../../../src-main/app/links-feature';

const l = (mbps: number | null, at = 1): LinkMeasurement => ({ fromId: 1, toId: 2, from: 'alpha', to: 'beta', mbps, rttMs: 0.4, measuredAt: at });

function fake() {
  let links: LinkMeasurement[] = [];
  let listener: ((c: CoordinatorChange) => void) | null = null;
  const measured: (readonly number[] | undefined)[] = [];
  const emitted: LinkMeasurement[][] = [];
  const feature = createLinksFeature({
    coordinator: {
      subscribe: (fn) => ((listener = fn), () => (listener = null)),
      linkSurvey: {
        links: () => links,
        measureNow: async (ids) => {
          measured.push(ids);
          links = [l(19.6, 5)];
        },
      },
    },
    emit: <E extends EventMethod>(event: E, payload: EventPayloads[E]) => {
      if (event === 'onLinks') emitted.push(payload as LinkMeasurement[]);
    },
  });
  const workersChange = () => listener?.({ type: 'workers', workers: [] } as unknown as CoordinatorChange);
  return { feature, emitted, measured, set: (next: LinkMeasurement[]) => (links = next), workersChange, listening: () => listener !== null };
}

describe('the links feature', () => {
  it('sends onLinks only when the links changed, not for every workers change', async () => {
    const f = fake();
    f.workersChange();
    expect(f.emitted).toEqual([]);
    f.set([l(940)]);
    f.workersChange();
    f.workersChange();
    expect(f.emitted).toEqual([[l(940)]]);
    expect(await f.feature.handlers.getLinks(undefined)).toEqual([l(940)]);
    f.feature.stop();
    expect(f.listening()).toBe(false);
  });

  it('measureLinks runs the survey over every active worker and answers the links known after it', async () => {
    const f = fake();
    expect(await f.feature.handlers.measureLinks(undefined)).toEqual([l(19.6, 5)]);
    expect(f.measured).toEqual([undefined]);
  });
});
