/**
 * The "Join another cluster" form as text, checked field by field so the person sees what is wrong next to the
 * field before anything is sent; the core parses the request again (the contract), so this is for the person,
 * not for safety. Also the badge each membership mode shows.
 */
import { normalizeCertSha256 } from '../../../src-shared/cert-fingerprint';
import { coordinatorUrlProblem, type MembershipState, type RequestArg } from '../../../src-shared/ipc';
import { clearTextProblem } from '../../../src-shared/cluster/clear-text';
import type { Badge } from '../../store/derive';

export interface JoinFormFields {
  url: string;
  token: string;
  /** Optional: the node name to use in the other cluster. */
  name: string;
  /** The --cert-sha256 value of the other machine's join command; needed for an https:// coordinator. */
  certSha256: string;
}

export type JoinFormErrors = Partial<Record<keyof JoinFormFields, string>>;

export type JoinFormResult = { ok: true; request: RequestArg<'joinCluster'> } | { ok: false; errors: JoinFormErrors };

const MAX_URL = 2048;
const MAX_TOKEN = 512;
const MAX_NAME = 128;

export function checkJoinForm(fields: JoinFormFields): JoinFormResult {
  const errors: JoinFormErrors = {};
  const certText = fields.certSha256.trim();
  const certSha256 = certText ? normalizeCertSha256(certText) : null;
  if (certText && !certSha256) errors.certSha256 = certProblem(certText);
  let url = fields.url.trim();
  if (!url) {
    errors.url = "Paste the other machine's coordinator URL, e.g. https://192.168.1.20:7421";
  } else {
    // People type "192.168.1.20:7421" without a scheme: http, the coordinator's default on one machine; https
    // when they also gave a fingerprint, since only an https coordinator has a certificate. Plain http is for
    // this machine only: beyond loopback the token would cross the network in clear (clear-text.ts).
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) url = `${certText ? 'https' : 'http'}://${url}`;
    const problem = url.length > MAX_URL ? `is longer than ${MAX_URL} characters` : coordinatorUrlProblem(url);
    if (problem) errors.url = `"${fields.url.trim().slice(0, 80)}" ${problem}.`;
    else if (/^https:/i.test(url) && !certText) {
      errors.certSha256 = "Needed for an https:// coordinator: paste the --cert-sha256 value from the other machine's join command.";
    } else if (/^http:/i.test(url) && certText) {
      errors.url = `"${fields.url.trim().slice(0, 80)}" is plain http://, but a certificate fingerprint was given: use the https:// URL from the join command.`;
    } else if (clearTextProblem(url, 'panel')) {
      errors.url = clearTextProblem(url, 'panel')!;
    }
  }
  const token = fields.token.trim();
  if (!token) errors.token = "Paste the join token from the other machine's Workers view.";
  else if (token.length < 8 || token.length > MAX_TOKEN) errors.token = `A join token has 8 to ${MAX_TOKEN} characters; this one has ${token.length}. Copy it again.`;
  else if (!/^[\x21-\x7e]+$/.test(token)) errors.token = 'A join token has no spaces or special characters. Copy it again.';
  const name = fields.name.trim();
  if (name.length > MAX_NAME) errors.name = `A node name has at most ${MAX_NAME} characters.`;
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, request: { url, token, ...(name ? { name } : {}), ...(certSha256 ? { certSha256 } : {}) } };
}

/** Why pasted text is not a fingerprint, counting its hex digits (a short paste is the usual cause). */
function certProblem(text: string): string {
  const digits = text.replace(/^sha-?256:\s*/i, '').replace(/[^0-9a-f]/gi, '').length;
  const stray = /[^0-9a-f:\s]/i.test(text.replace(/^sha-?256:\s*/i, ''));
  if (stray) return 'A certificate fingerprint has only hex digits (0–9, a–f), colons allowed. Copy the --cert-sha256 value again.';
  return `A SHA-256 fingerprint has 64 hex digits; this one has ${digits}. Copy the --cert-sha256 value again.`;
}

const MEMBERSHIP_BADGES: Record<MembershipState['mode'], Badge> = {
  'own-coordinator': { tone: 'neutral', text: 'Not joined' },
  joining: { tone: 'info', text: 'Joining…' },
  joined: { tone: 'ok', text: 'Joined' },
  lost: { tone: 'warn', text: 'Coordinator lost' },
  error: { tone: 'bad', text: 'Join failed' },
};

export function membershipBadge(mode: MembershipState['mode']): Badge {
  return MEMBERSHIP_BADGES[mode];
}

/** Whether the form is offered (not while this machine is with, or on its way to, another cluster). */
export function canJoin(membership: MembershipState | null): boolean {
  return membership === null || membership.mode === 'own-coordinator' || membership.mode === 'error';
}
