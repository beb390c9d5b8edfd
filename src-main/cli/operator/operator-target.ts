/**
 * Which coordinator an operator command talks to, and with which token: from the command line, then the
 * environment, then the data folder (coordinator.json written by the running coordinator, the operator token in
 * secrets.json, the certificate in coordinator-tls.json). Each answer remembers where it came from, so an error
 * can say what to change.
 */
import path from 'node:path';
import { normalizeCertSha256 } from '../../../src-shared/cert-fingerprint';
import { OPERATOR_TOKEN_ENV, OPERATOR_TOKEN_WORDS, pageIsNotTheApi } from '../../../src-shared/cli-address';
import { clearTextProblem } from '../../../src-shared/cluster/clear-text';
import { CERT_ENV, parseCoordinatorUrl } from '../../platform/net/coordinator-url';
import { fingerprintOf, TLS_IDENTITY_FILE } from '../../platform/tls-identity';
import { SECRETS_FILE } from '../../app/secrets';
import { defaultUserDataDir } from '../../platform/user-data-dir';
import { UsageError, type CliIo } from '../command';
import { COORDINATOR_RECORD_FILE, readCoordinatorRecord } from '../../app/coordinator-record';
import { isPidAlive } from '../../platform/files/errno';
import { readPrivateFile } from '../../platform/files/private-file';
import { tokensEqual } from '../../platform/tokens';
import { EXIT, OperatorFailure } from './operator-failure';

export const URL_ENV = 'GPU_SHARE_URL';
export { OPERATOR_TOKEN_ENV };
/** Where the desktop app and `gpu-share serve` listen unless told otherwise. */
export const DEFAULT_COORDINATOR_URL = 'http://127.0.0.1:7421';

export interface OperatorFlags {
  url?: string | undefined;
  token?: string | undefined;
  'cert-sha256'?: string | undefined;
  'data-dir'?: string | undefined;
}

export interface OperatorTarget {
  url: URL;
  token: string;
  certSha256: string | undefined;
  /** Where the fingerprint came from, in words, when there is one. */
  certSource: string | null;
  dataDir: string;
  /** How the URL was found: 'flag', 'env', 'record' (coordinator.json) or 'default'. */
  urlSource: 'flag' | 'env' | 'record' | 'default';
  /** Why the record was passed over, when it was (a crashed coordinator's, unreadable). */
  recordNote: string | null;
  /** Where the token came from, in words ("--token", "/home/me/.config/GPU Share/secrets.json"). */
  tokenSource: string;
  /** The pid coordinator.json names, when the URL came from it. */
  recordPid: number | null;
}

export async function resolveOperatorTarget(flags: OperatorFlags, io: Pick<CliIo, 'env' | 'cwd' | 'err'>): Promise<OperatorTarget> {
  const dataDir = flags['data-dir'] ? path.resolve(io.cwd, flags['data-dir']) : defaultUserDataDir(io.env);
  const located = await locateUrl(flags, io.env, dataDir);
  const page = await pageUrlProblem(located, dataDir);
  if (page) throw new UsageError(page);
  const parsed = parseCoordinatorUrl(located.raw);
  if (!parsed.ok) throw new UsageError(`${located.source === 'env' ? URL_ENV : '--url'}: ${parsed.message}`);
  const url = parsed.url;
  // Before the token is even looked up: plain http beyond loopback would carry it across the network in clear.
  const clear = clearTextProblem(url, 'operator');
  if (clear) throw new UsageError(`${urlSourceName(located)}: ${clear}`);
  const cert = await locateCert(flags, io.env, url, dataDir, located.recordCert);
  const token = await locateToken(flags, io, dataDir);
  if (token.source !== path.join(dataDir, SECRETS_FILE) && (await isPageToken(token.value, dataDir))) {
    // Refused here, before it is sent anywhere: it opens the page, never the API.
    throw new OperatorFailure(`the token from ${token.source} is the page token of \`gpu-share serve\` (in ${path.join(dataDir, SECRETS_FILE)}): the CLI needs ${OPERATOR_TOKEN_WORDS}.`, EXIT.unauthorized, 'unauthorized');
  }
  return {
    url,
    token: token.value,
    certSha256: cert?.value,
    certSource: cert?.source ?? null,
    dataDir,
    urlSource: located.source,
    recordNote: located.note,
    tokenSource: token.source,
    recordPid: located.pid,
  };
}

/** The flag, variable or file the URL came from, as the person would change it. */
function urlSourceName(located: LocatedUrl): string {
  if (located.source === 'flag') return '--url';
  if (located.source === 'env') return URL_ENV;
  return located.source === 'record' ? COORDINATOR_RECORD_FILE : 'the default URL';
}

/**
 * The page's URL (it carries `?token=`) given where the API's belongs: says so, with the API's --url when this
 * machine's coordinator.json names a live one, and never repeats the token. Null for any other URL.
 */
async function pageUrlProblem(located: LocatedUrl, dataDir: string): Promise<string | null> {
  if (located.source !== 'flag' && located.source !== 'env') return null;
  let url: URL;
  try {
    url = new URL(located.raw);
  } catch {
    return null;
  }
  if (!url.searchParams.has('token')) return null;
  const read = await readCoordinatorRecord(dataDir);
  const api = read.kind === 'found' && isPidAlive(read.record.pid) ? read.record : null;
  return `${urlSourceName(located)}: ${pageIsNotTheApi(url.origin, api?.url ?? null, api?.certSha256 ?? null)}`;
}

/** Is `token` the page token kept in this data folder's secrets.json? False when there is none to compare. */
async function isPageToken(token: string, dataDir: string): Promise<boolean> {
  try {
    const text = await readPrivateFile(path.join(dataDir, SECRETS_FILE), "the cluster's tokens");
    const pageToken = text === null ? undefined : (JSON.parse(text) as { pageToken?: unknown }).pageToken;
    return typeof pageToken === 'string' && pageToken.length > 0 && tokensEqual(token, pageToken);
  } catch {
    return false;
  }
}

interface LocatedUrl {
  raw: string;
  source: OperatorTarget['urlSource'];
  note: string | null;
  pid: number | null;
  recordCert: string | null;
}

async function locateUrl(flags: OperatorFlags, env: NodeJS.ProcessEnv, dataDir: string): Promise<LocatedUrl> {
  const none = { note: null, pid: null, recordCert: null };
  if (flags.url) return { raw: flags.url, source: 'flag', ...none };
  if (env[URL_ENV]) return { raw: env[URL_ENV], source: 'env', ...none };
  const read = await readCoordinatorRecord(dataDir);
  if (read.kind === 'found') {
    if (isPidAlive(read.record.pid)) {
      return { raw: read.record.url, source: 'record', note: null, pid: read.record.pid, recordCert: read.record.certSha256 };
    }
    const note = `${read.file} names process ${read.record.pid}, which is not running (a coordinator that did not stop cleanly)`;
    return { raw: DEFAULT_COORDINATOR_URL, source: 'default', ...none, note };
  }
  const note = read.kind === 'unreadable' ? `${read.file} was ignored: ${read.reason}` : null;
  return { raw: DEFAULT_COORDINATOR_URL, source: 'default', ...none, note };
}

async function locateCert(
  flags: OperatorFlags,
  env: NodeJS.ProcessEnv,
  url: URL,
  dataDir: string,
  recordCert: string | null,
): Promise<{ value: string; source: string } | undefined> {
  const given = flags['cert-sha256'] ?? (env[CERT_ENV]?.trim() || undefined);
  if (given !== undefined) {
    const flag = flags['cert-sha256'] !== undefined ? '--cert-sha256' : CERT_ENV;
    if (!normalizeCertSha256(given)) throw new UsageError(`${flag}: "${given}" is not a SHA-256 certificate fingerprint (64 hex digits)`);
    if (url.protocol !== 'https:') throw new UsageError(`${flag} is for https coordinators, and ${url.origin} is plain http; leave it out, or use the https:// URL`);
    return { value: given, source: flag };
  }
  if (url.protocol !== 'https:') return undefined;
  if (recordCert) return { value: recordCert, source: path.join(dataDir, COORDINATOR_RECORD_FILE) };
  // This machine's own coordinator: its certificate is kept in the data folder.
  // A link there is refused, never followed: a planted one would choose the certificate this CLI trusts.
  const stored = await readPrivateFile(path.join(dataDir, TLS_IDENTITY_FILE), 'the coordinator\'s TLS identity').then(
    (text) => {
      if (text === null) return undefined;
      try {
        return fingerprintOf((JSON.parse(text) as { certPem: string }).certPem);
      } catch {
        return undefined;
      }
    },
    () => undefined,
  );
  if (stored) return { value: stored, source: path.join(dataDir, TLS_IDENTITY_FILE) };
  throw new UsageError(
    `${url.origin} speaks https, and its self-signed certificate can only be trusted by its SHA-256 fingerprint: pass --cert-sha256 HEX (the one in the coordinator's join command) or set ${CERT_ENV}`,
  );
}

async function locateToken(flags: OperatorFlags, io: Pick<CliIo, 'env' | 'err'>, dataDir: string): Promise<{ value: string; source: string }> {
  if (flags.token) {
    io.err(`warning: --token puts the operator token on the command line, where other users of this machine can read it (ps); set ${OPERATOR_TOKEN_ENV} instead\n`);
    return { value: flags.token, source: '--token' };
  }
  const fromEnv = io.env[OPERATOR_TOKEN_ENV]?.trim();
  if (fromEnv) return { value: fromEnv, source: OPERATOR_TOKEN_ENV };
  const file = path.join(dataDir, SECRETS_FILE);
  let text: string;
  try {
    const read = await readPrivateFile(file, "the cluster's tokens"); // a link there is refused, never followed
    if (read === null) throw Object.assign(new Error(`${file} does not exist`), { code: 'ENOENT' });
    text = read;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new OperatorFailure(
        `no coordinator has run with the data folder ${dataDir} (there is no ${SECRETS_FILE} with its operator token). ` +
          'Start one with `gpu-share serve` (or open the GPU Share app); for a coordinator with another data folder pass --data-dir DIR, or --url URL with ' +
          `${OPERATOR_TOKEN_ENV}.`,
        EXIT.unreachable,
        'not-running',
      );
    }
    throw new OperatorFailure(`cannot read the operator token from ${file}: ${(error as Error).message}. Run as the user who runs GPU Share, or set ${OPERATOR_TOKEN_ENV}.`, EXIT.unauthorized, 'unauthorized');
  }
  let token: unknown;
  try {
    token = (JSON.parse(text) as { operatorToken?: unknown }).operatorToken;
  } catch {
    token = undefined;
  }
  if (typeof token !== 'string' || token.length === 0) {
    throw new OperatorFailure(`${file} holds no operator token; start GPU Share once to make one, or set ${OPERATOR_TOKEN_ENV}.`, EXIT.unauthorized, 'unauthorized');
  }
  return { value: token, source: file };
}
