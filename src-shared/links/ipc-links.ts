/**
 * The link channels, spread into ipc.ts's maps: the measured links between workers for the Nodes view's link
 * map (getLinks at load and after a reconnect, onLinks whenever a measurement lands) and its "Measure now"
 * button (measureLinks: every link among the active workers, answered when done). Handlers:
 * src-main/app/links-feature.ts.
 */
import { z } from 'zod';
import type { LinkMeasurement } from './link-matrix';

export const linkRequests = {
  getLinks: { channel: 'links:list', arg: z.undefined() },
  measureLinks: { channel: 'links:measure', arg: z.undefined() },
} as const;

export interface LinkRequestResults {
  getLinks: LinkMeasurement[];
  /** Resolves when every link among the active workers was measured (or after a minute), with all links known. */
  measureLinks: LinkMeasurement[];
}

export const linkEvents = {
  /** The measured links changed (a probe landed, a worker left and took its links with it). */
  onLinks: 'links:changed',
} as const;

export interface LinkEventPayloads {
  onLinks: LinkMeasurement[];
}
