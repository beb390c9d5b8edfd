/**
 * Session-wide defences: the CSP header on every response (belt and braces next to the app:// protocol's own
 * header) and a permission policy that grants nothing but notifications and clipboard writes, to our page only.
 */
import type { Session, WebContents } from 'electron';
import { isAppUrl } from './app-protocol';
import { withContentSecurityPolicy } from './content-security-policy';

/**
 * What our page may have: desktop notifications, and writing (never reading) the clipboard for the Workers
 * view's Copy button; asked for from our own origin only.
 */
const ALLOWED_PERMISSIONS = new Set(['notifications', 'clipboard-sanitized-write']);

export function isPermissionAllowed(permission: string, requestingUrl: string): boolean {
  return ALLOWED_PERMISSIONS.has(permission) && isAppUrl(requestingUrl);
}

export function hardenSession(session: Session, isOurContents: (contents: WebContents | null) => boolean): void {
  session.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: withContentSecurityPolicy(details.responseHeaders) });
  });
  session.setPermissionRequestHandler((contents, permission, callback, details) => {
    callback(isOurContents(contents) && isPermissionAllowed(permission, details.requestingUrl));
  });
  session.setPermissionCheckHandler((contents, permission, requestingOrigin) => {
    return isOurContents(contents) && isPermissionAllowed(permission, requestingOrigin);
  });
}
