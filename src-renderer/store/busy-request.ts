/** One request from the page with a busy flag; a failure becomes the error banner ("Could not …: reason"). */
import { actionFailed, clearActionError, setBusy } from './actions';
import { apply, messageOf, type AppStore } from './apply';

/** Resolves the answer, or undefined after showing the failure. */
export async function busyRequest<T>(store: AppStore, busyName: string, failure: string, fn: () => Promise<T>): Promise<T | undefined> {
  apply(store, setBusy, busyName, true);
  apply(store, clearActionError);
  try {
    return await fn();
  } catch (error) {
    apply(store, actionFailed, `${failure}: ${messageOf(error)}`);
    return undefined;
  } finally {
    apply(store, setBusy, busyName, false);
  }
}
