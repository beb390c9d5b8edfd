/**
 * Decides, once for every IPC message, whether it came from our own page: the top frame of one of our
 * windows, showing app://gpu-share/. Anything else (another window, an iframe, a page that navigated
 * somewhere else, a frame already gone) is refused before a handler runs.
 */
import type { WebContents, WebFrameMain } from 'electron';
import { isAppUrl } from './app-protocol';

/** The parts of an IpcMainEvent / IpcMainInvokeEvent the check reads. */
export interface IpcSenderInfo {
  sender: WebContents;
  readonly senderFrame: WebFrameMain | null;
}

export function isTrustedSender(event: IpcSenderInfo, isOurContents: (contents: WebContents) => boolean): boolean {
  const frame = event.senderFrame;
  if (!frame) return false;
  if (frame.parent !== null) return false;
  if (!isAppUrl(frame.url)) return false;
  return isOurContents(event.sender);
}
