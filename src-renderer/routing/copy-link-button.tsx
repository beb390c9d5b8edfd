/**
 * "Copy link" on a run, job or node (in the browser page; the desktop window's app:// address opens nowhere
 * else): the page's address with that thing's #route and without the token, so it
 * can be pasted into a chat without handing out access. Where the browser refuses the clipboard (plain http
 * that is not localhost), the link is shown selected so Ctrl+C copies it.
 */
import { useContext, useEffect, useState } from 'react';
import { ServicesContext } from '../app-context';
import { shareableUrl, type Route } from './route';

export function CopyLinkButton({ route, label = 'Copy link' }: { route: Route; label?: string }) {
  const [state, setState] = useState<{ outcome: 'copied' | 'refused'; url: string } | null>(null);
  // The desktop window's app:// address opens nowhere else: the link is for the browser page (`gpu-share serve`).
  const inElectron = useContext(ServicesContext)?.inElectron ?? false;
  // "Copied" says what just happened; it goes after a few seconds rather than stay as a stale claim.
  useEffect(() => {
    if (state?.outcome !== 'copied') return;
    const timer = setTimeout(() => setState(null), 4000);
    return () => clearTimeout(timer);
  }, [state]);
  const copy = async () => {
    const url = shareableUrl(window.location.href, route);
    try {
      await navigator.clipboard.writeText(url);
      setState({ outcome: 'copied', url });
    } catch {
      setState({ outcome: 'refused', url });
    }
  };
  if (inElectron) return null;
  return (
    <span className="copy-link" data-testid="copy-link">
      <button type="button" className="button small" onClick={() => void copy()} data-route={`${route.view}/${route.id ?? ''}`}>
        {label}
      </button>
      <span role="status" className="small muted">
        {state?.outcome === 'copied' ? ' Copied (without the token).' : null}
      </span>
      {state?.outcome === 'refused' ? (
        <input
          className="copy-link-text"
          readOnly
          aria-label="Link to copy: the browser refused the clipboard, press Ctrl+C"
          value={state.url}
          ref={(el) => el?.select()}
          size={Math.min(60, state.url.length)}
        />
      ) : null}
    </span>
  );
}
