/** Page-wide messages: the lost connection, and the last action that failed. */
import { clearActionError } from '../store/actions';
import { act, useApp } from '../store/app-store';
import { CloseIcon, ErrorIcon } from './icons';

export function ConnectionBanner() {
  const connection = useApp((s) => s.connection);
  if (connection.status !== 'reconnecting') return null;
  const seconds = connection.retryInMs === null ? null : Math.max(0.1, connection.retryInMs / 1000).toFixed(1);
  return (
    <div className="banner banner-warn" role="alert" data-testid="disconnected">
      <strong>Disconnected — reconnecting…</strong>
      <span>
        {' '}
        Attempt {connection.attempt}
        {seconds ? `, next try in ${seconds} s` : ''}. If it does not come back, check that <code>gpu-share serve</code> is still running.
      </span>
    </div>
  );
}

export function LoadErrorBanner() {
  const loadError = useApp((s) => s.loadError);
  if (!loadError) return null;
  return (
    <div className="banner banner-bad" role="alert">
      <strong>GPU Share could not load its state.</strong> {loadError}
    </div>
  );
}

export function ActionErrorBanner() {
  const message = useApp((s) => s.actionError);
  if (!message) return null;
  return (
    <div className="banner banner-bad" role="alert" data-testid="action-error">
      <ErrorIcon size={18} />
      <span className="banner-text">{message}</span>
      <button type="button" className="icon-button" aria-label="Dismiss the error" onClick={() => act(clearActionError)}>
        <CloseIcon />
      </button>
    </div>
  );
}
