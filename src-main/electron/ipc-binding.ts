/**
 * Carries the contract (src-shared/ipc.ts) over Electron IPC: one ipcMain handler per request channel, the
 * sender checked once in the wrapper and the argument parsed by dispatchRequest before the core sees it;
 * core events go to the windows' pages through their outboxes.
 */
import { ipcMain, type BrowserWindow, type IpcMainEvent, type IpcMainInvokeEvent, type WebContents } from 'electron';
import { events, requests, type EventMethod, type EventPayloads, type RequestHandlers, type RequestMethod } from '../../src-shared/ipc';
import type { AppCore } from '../app/app-core-types';
import { dispatchRequest, RequestError } from '../app/ipc-dispatch';
import { RendererOutbox } from './renderer-outbox';
import { isEventChannel, LISTENING_CHANNEL, type IpcReply } from './shell-channels';
import { isTrustedSender } from './trusted-sender';

export interface IpcBinding {
  /** Starts serving a window: its page may call requests and receives events. */
  attachWindow(window: BrowserWindow): void;
  /** True for the web contents of an attached, live window. */
  isOurContents(contents: WebContents | null): boolean;
  /** Sends one event to every attached page (used by the shell itself, e.g. onFocus after a notification click). */
  sendEvent<E extends EventMethod>(event: E, payload: EventPayloads[E]): void;
  /** Removes every handler and listener; called on quit. */
  dispose(): void;
}

export interface IpcBindingOptions {
  /** Where refusals and handler failures are logged (default console.warn). */
  log?: (message: string) => void;
  /** Requests the shell answers itself instead of the core (a native dialog: project-folder-picker.ts). */
  shellHandlers?: Partial<RequestHandlers>;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

export function bindIpc(core: AppCore, options: IpcBindingOptions = {}): IpcBinding {
  const log = options.log ?? ((message: string) => console.warn(`GPU Share: ${message}`));
  const outboxes = new Map<WebContents, RendererOutbox>();
  const isOurContents = (contents: WebContents | null): boolean =>
    contents !== null && outboxes.has(contents) && !contents.isDestroyed();
  const trusted = (event: IpcMainEvent | IpcMainInvokeEvent): boolean => isTrustedSender(event, isOurContents);
  const handlers: RequestHandlers = { ...core.handlers, ...options.shellHandlers };

  const channels: string[] = [];
  for (const method of Object.keys(requests) as RequestMethod[]) {
    const { channel } = requests[method];
    channels.push(channel);
    ipcMain.handle(channel, async (event, arg: unknown): Promise<IpcReply> => {
      if (!trusted(event)) {
        log(`refused ${method} from ${event.senderFrame?.url ?? 'a closed frame'}: not GPU Share's own page`);
        return { ok: false, error: `${method}: refused, the request did not come from GPU Share's own page` };
      }
      try {
        return { ok: true, result: await dispatchRequest(handlers, method, arg) };
      } catch (error) {
        // Refusals are expected; anything else is a bug worth its stack in the log.
        if (!(error instanceof RequestError)) log(`${method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        return { ok: false, error: messageOf(error) };
      }
    });
  }

  const onListening = (event: IpcMainEvent, channel: unknown): void => {
    if (!trusted(event) || !isEventChannel(channel)) return;
    outboxes.get(event.sender)?.markListening(channel);
  };
  ipcMain.on(LISTENING_CHANNEL, onListening);

  const broadcast = (channel: string, payload: unknown): void => {
    for (const [contents, outbox] of outboxes) {
      if (!outbox.send(channel, payload)) outboxes.delete(contents);
    }
  };
  const unsubscribe = core.subscribe((event, payload) => broadcast(events[event], payload));

  return {
    attachWindow(window) {
      const contents = window.webContents;
      if (outboxes.has(contents)) return;
      outboxes.set(contents, new RendererOutbox(contents));
      contents.on('did-start-navigation', (details) => {
        if (details.isMainFrame && !details.isSameDocument) outboxes.get(contents)?.reset();
      });
      contents.on('render-process-gone', () => outboxes.get(contents)?.reset());
      contents.once('destroyed', () => outboxes.delete(contents));
      window.once('closed', () => outboxes.delete(contents));
    },
    isOurContents,
    sendEvent(event, payload) {
      broadcast(events[event], payload);
    },
    dispose() {
      unsubscribe();
      for (const channel of channels) ipcMain.removeHandler(channel);
      ipcMain.removeListener(LISTENING_CHANNEL, onListening);
      outboxes.clear();
    },
  };
}
