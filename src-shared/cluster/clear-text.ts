/**
 * The one rule for plain http: a token may travel unencrypted only to this machine. Every place that takes a
 * coordinator URL — `gpu-share worker --join`, every operator command's `--url`, the join panel (renderer and
 * core) — asks this before anything is sent, so a URL that would put the join or operator token on the LAN in
 * clear is refused with a sentence that says what to type instead. Pure: the renderer uses it too.
 */
import { isLoopbackAddress } from './loopback';

/** The parts of a WHATWG URL this rule reads (src-shared is built without the DOM or Node typings). */
interface UrlParts {
  protocol: string;
  hostname: string;
  port: string;
  origin: string;
}
declare const URL: new (input: string) => UrlParts;

/** Who would send the secret, which decides what to advise instead. */
export type ClearTextUse =
  /** `gpu-share worker --join`: the join token. */
  | 'worker'
  /** An operator command's `--url` (or GPU_SHARE_URL): the operator token. */
  | 'operator'
  /** The app's "Join another cluster" panel: the join token, typed into fields rather than flags. */
  | 'panel';

const SECRET: Record<ClearTextUse, string> = {
  worker: 'the join token',
  operator: 'the operator token',
  panel: 'the join token',
};

/**
 * Null when `url` may be spoken to (https, or http to a literal 127.0.0.0/8 or ::1 address, or to `localhost`
 * itself); otherwise the sentence
 * for the person, naming the URL and what to do. A string that is not a URL is not this rule's business (the
 * URL parser says what is wrong with it), so it answers null.
 */
export function clearTextProblem(url: string | UrlParts, use: ClearTextUse): string | null {
  let parsed: UrlParts;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:') return null;
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  // A literal loopback address, or the name `localhost` itself, which the connection resolves once and
  // connects to only by a loopback address (platform/net/loopback-lookup.ts). Other names that look local
  // (`foo.localhost`, `localhost.`) are the resolver's to answer, and a LAN resolver may answer 10.x.
  if (host === 'localhost' || isLoopbackAddress(host)) return null;
  const where = parsed.origin;
  const head = `${where} is plain http to a host other than this machine's loopback (127.0.0.1, ::1, localhost), so ${SECRET[use]} would cross the network unencrypted; nothing was sent.`;
  return `${head} ${advice(parsed, use)}`;
}

function advice(url: UrlParts, use: ClearTextUse): string {
  switch (use) {
    case 'worker':
      return "Use the https:// URL with --cert-sha256 from the coordinator's Add a worker panel (or `gpu-share serve` output).";
    case 'panel':
      return "Use the https:// URL and its certificate fingerprint (--cert-sha256) from the other machine's Add a worker panel.";
    case 'operator': {
      const port = url.port || '80';
      const host = url.hostname;
      return (
        `Run the command on the coordinator's machine, or over an SSH tunnel: ssh -L ${port}:127.0.0.1:${port} ${host}, then --url http://127.0.0.1:${port} ` +
        '(or use its https:// URL with --cert-sha256).'
      );
    }
  }
}
