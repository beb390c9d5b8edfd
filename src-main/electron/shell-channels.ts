/**
 * What the preload and the main process say to each other beyond the contract: the reply envelope of every
 * request, and the page's "I am listening on this event channel" signal that releases queued events.
 */
import { events, type EventChannel } from '../../src-shared/ipc';

/** Sent by the preload the first time the page subscribes to an event channel. */
export const LISTENING_CHANNEL = 'shell:listening';

/**
 * Every request resolves to this envelope instead of throwing across IPC, because Electron wraps a thrown
 * error's text in "Error invoking remote method …"; the preload turns `ok: false` into an Error with
 * exactly our message.
 */
export type IpcReply = { ok: true; result: unknown } | { ok: false; error: string };

const eventChannels = new Set<string>(Object.values(events));

export function isEventChannel(value: unknown): value is EventChannel {
  return typeof value === 'string' && eventChannels.has(value);
}

export function isIpcReply(value: unknown): value is IpcReply {
  if (typeof value !== 'object' || value === null) return false;
  const reply = value as { ok?: unknown; error?: unknown };
  return reply.ok === true || (reply.ok === false && typeof reply.error === 'string');
}
