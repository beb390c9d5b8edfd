/**
 * The field a browser tab shows when it has neither the page token in its address nor the page cookie (issue 25
 * item 5): paste the token, or the whole URL `gpu-share serve` printed, and the tab reopens the same #route with
 * it; the server swaps it for the cookie and the page drops it from the address again.
 */
import { TOKEN_PARAM } from '../../src-shared/headless-protocol';

/**
 * The address to open for what was typed: this page's address with `?token=` set, its #route kept. Accepts the
 * bare token or a whole URL carrying one. Null when nothing usable was typed.
 */
export function tokenEntryUrl(href: string, typed: string): string | null {
  const text = typed.trim();
  if (!text) return null;
  let token = text;
  if (text.includes(`${TOKEN_PARAM}=`)) {
    const query = text.slice(text.indexOf(`${TOKEN_PARAM}=`)).split('#')[0]!;
    token = new URLSearchParams(query).get(TOKEN_PARAM)?.trim() ?? '';
  }
  if (!token || /\s/.test(token)) return null;
  const url = new URL(href);
  url.searchParams.set(TOKEN_PARAM, token);
  return url.toString();
}

/** Replaces `root`'s content with the explanation and the field; submitting reopens the page with the token. */
export function showTokenField(root: HTMLElement, message: string, win: Window = window): void {
  const form = document.createElement('form');
  form.className = 'fatal token-field';
  form.setAttribute('data-testid', 'token-field');
  const p = document.createElement('p');
  p.setAttribute('role', 'alert');
  p.textContent = message;
  const label = document.createElement('label');
  label.textContent = 'Page token';
  const input = document.createElement('input');
  input.type = 'password';
  input.name = 'token';
  input.autocomplete = 'off';
  input.spellcheck = false;
  input.required = true;
  label.append(input);
  const button = document.createElement('button');
  button.type = 'submit';
  button.textContent = 'Open';
  const error = document.createElement('p');
  error.className = 'token-field-error';
  error.setAttribute('aria-live', 'polite');
  form.append(p, label, button, error);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = tokenEntryUrl(win.location.href, input.value);
    if (!next) {
      error.textContent = 'That is not a token: paste the part after ?token= of the URL `gpu-share serve` printed, or that whole URL.';
      return;
    }
    // replace, not assign: the address with the token never becomes a history entry of its own.
    win.location.replace(next);
  });
  root.replaceChildren(form);
  input.focus();
}
