/**
 * Reads the "Add a worker" line `gpu-share serve` prints: what a person copies to another machine, so the
 * tests join exactly the way a person would. Two forms are accepted, the current and the one being built:
 *
 *   Add a worker: run this on another machine: gpu-share worker --join http://10.0.0.5:7421 --token T
 *   Add a worker: run this on another machine: GPU_SHARE_JOIN_TOKEN=T gpu-share worker --join https://10.0.0.5:7421 --cert-sha256 <64 hex>
 * and, when the coordinator listens on loopback only (join-hint.ts), a title without a colon and a --name:
 *   Add a worker on this machine (the coordinator listens on loopback only; …): GPU_SHARE_JOIN_TOKEN=T gpu-share worker --join http://127.0.0.1:7421 --name vm-2
 */

export interface JoinInfo {
  url: URL;
  token: string;
  /** The coordinator's certificate fingerprint, lowercase hex without colons; null for plain http. */
  certSha256: string | null;
}

/** Either title: "Add a worker: run this on another machine", or (loopback only) "Add a worker on this machine (…)". */
export const JOIN_LINE = /^Add a worker[^:]*: (.*)$/;

const unquote = (s: string) => s.replace(/^(['"])(.*)\1$/, '$2');

/** Parses the command part (or the whole line); throws naming what is missing, with the line. */
export function parseJoinCommand(text: string): JoinInfo {
  const command = JOIN_LINE.exec(text.trim())?.[1] ?? text.trim();
  const join = /--join[ =](\S+)/.exec(command)?.[1];
  const token = /(?:^|\s)GPU_SHARE_JOIN_TOKEN=(\S+)/.exec(command)?.[1] ?? /--token[ =](\S+)/.exec(command)?.[1];
  const cert = /--cert-sha256[ =](\S+)/.exec(command)?.[1];
  if (!join) throw new Error(`no --join URL in the join line: ${text}`);
  if (!token) throw new Error(`no token (GPU_SHARE_JOIN_TOKEN=… or --token …) in the join line: ${text}`);
  const url = new URL(unquote(join));
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`the join URL is not http(s): ${url.href}`);
  let certSha256: string | null = null;
  if (cert !== undefined) {
    certSha256 = unquote(cert).replace(/:/g, '').toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(certSha256)) throw new Error(`--cert-sha256 is not 64 hex digits: ${cert}`);
  }
  // Without a pin, an https join would trust whoever answers: the app must print one with every https URL.
  if (url.protocol === 'https:' && certSha256 === null) throw new Error(`an https join URL without --cert-sha256: ${text}`);
  return { url, token: unquote(token), certSha256 };
}

/** `https://host:port` → `https://other:port2`: the same coordinator reached another way (through a proxy). */
export function viaAddress(url: URL, hostPort: string): string {
  return `${url.protocol}//${hostPort}`;
}
