/**
 * The measured links between workers, for the pages (issue 16, item 1): the Nodes view's link map loads them
 * (getLinks), is told whenever a measurement lands or a worker takes its links away (onLinks, sent only when
 * the list really changed), and its "Measure now" asks for every link among the active workers at once.
 */
import type { EmitEvent, RequestHandlers } from '../../src-shared/ipc';
import type { LinkMeasurement } from '../../src-shared/links/link-matrix';
import type { CoordinatorChange } from '../core/coordinator/service';
import { RequestError } from './ipc-dispatch';

type LinkHandlers = Pick<RequestHandlers, 'getLinks' | 'measureLinks'>;

export interface LinksFeature {
  handlers: LinkHandlers;
  stop(): void;
}

/** What this feature uses of the coordinator: its change feed and its link survey (link-survey.ts). */
export interface LinksSource {
  subscribe(listener: (change: CoordinatorChange) => void): () => void;
  linkSurvey: { links(): LinkMeasurement[]; measureNow(ids?: readonly number[]): Promise<unknown> };
}

export function createLinksFeature(opts: { coordinator: LinksSource; emit: EmitEvent }): LinksFeature {
  const { coordinator, emit } = opts;
  const links = (): LinkMeasurement[] => coordinator.linkSurvey.links();
  // The survey tells the change feed as a workers change; most of those leave the links as they were.
  let last = JSON.stringify(links());
  const unsubscribe = coordinator.subscribe((change) => {
    if (change.type !== 'workers') return;
    const now = links();
    const text = JSON.stringify(now);
    if (text === last) return;
    last = text;
    emit('onLinks', now);
  });
  return {
    handlers: {
      getLinks: async () => links(),
      measureLinks: async () => {
        try {
          await coordinator.linkSurvey.measureNow();
        } catch (error) {
          throw new RequestError(`measuring the links failed: ${error instanceof Error ? error.message : String(error)}`);
        }
        return links();
      },
    },
    stop: unsubscribe,
  };
}
