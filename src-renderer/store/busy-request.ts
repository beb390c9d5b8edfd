/** One request from the page with a busy flag; a failure becomes the error banner ("Could not …: reason"). */
import { actionFailed, clearActionError, setBusy } from './actions';
import { apply, messageOf, type AppStore } from './apply';

/**
 * Resolves the answer, or undefined after showing the failure: in the banner, unless `placed` shows it elsewhere
 * (a form's field) and says so by returning true.
 */
export async function busyRequest<T>(store: AppStore, busyName: string, failure: string, fn: () => Promise<T>, placed?: (message: string) => boolean): Promise<T | undefined> {
  apply(store, setBusy, busyName, true);
  apply(store, clearActionError);
  try {
    return await fn();
  } catch (error) {
    const message = messageOf(error);
    if (!placed?.(message)) apply(store, actionFailed, `${failure}: ${message}`);
    return undefined;
  } finally {
    apply(store, setBusy, busyName, false);
  }
}
