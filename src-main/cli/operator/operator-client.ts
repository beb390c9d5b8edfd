/**
 * The operator side of the coordinator's API for the CLI: an ApiConnection (platform/net/; the same worker-API
 * table, pinned TLS and reply checks the agent's client uses) with the operator token, and every failure turned into an OperatorFailure
 * whose message says what to do — start the coordinator, fix the token, list the runs.
 */
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { ApiConnection } from '../../platform/net/api-connection';
import { loopbackOnlyLookup } from '../../platform/net/loopback-lookup';
import { describeNetworkError, readReply, type ApiReply } from '../../platform/net/api-reply';
import { CERT_MISMATCH } from '../../platform/net/pinned-connection';
import { RequestTimeoutError } from '../../platform/net/http-post';
import { workerApi, type EndpointBody, type EndpointName, type EndpointParams, type EndpointReply, type WorkerApi } from '../../../src-shared/worker-api';
import { EXIT, OperatorFailure } from './operator-failure';
import { OPERATOR_TOKEN_ENV, type OperatorTarget } from './operator-target';

/** The worker's own endpoints (join token or session), which an operator never calls. */
type WorkerOnly = 'presence' | 'join' | 'heartbeat' | 'report' | 'leave' | 'jobStarted' | 'jobOutput' | 'jobComplete' | 'jobFail' | 'uploadArtifact';
type OperatorName = Exclude<EndpointName, WorkerOnly>;
/** Operator endpoints that answer a file (read with `download`), not JSON (read with `call`). */
type DownloadEndpoint = { [K in OperatorName]: WorkerApi[K]['transport'] extends 'binary-download' ? K : never }[OperatorName];
type OperatorEndpoint = Exclude<OperatorName, DownloadEndpoint>;

/** Bytes of an error answer read before giving up on it (errors are a short JSON sentence). */
const MAX_ERROR_BYTES = 64 * 1024;

/** Seconds an answer may take; the coordinator answers operator reads from memory. */
const TIMEOUT_MS = 10_000;
/**
 * How long a download may wait for its answer: before a stored tarball's first download the coordinator reads it
 * whole to inspect it (ArtifactStore.openInspected), about 3 s a GiB, more for one that unpacks much larger.
 */
export const DOWNLOAD_ANSWER_MS = 180_000;

export class OperatorClient {
  private readonly client: ApiConnection;

  constructor(readonly target: OperatorTarget) {
    // The operator token goes as a bearer token; an operator never joins, so no join token or session is held.
    this.client = new ApiConnection(target.url, { bearerToken: target.token, ...(target.certSha256 ? { certSha256: target.certSha256 } : {}) });
  }

  /**
   * Calls one operator endpoint and returns its checked reply. `notFound` words a 404 for this call ("no run
   * …: `gpu-share runs list` shows …") in place of the coordinator's sentence, which names API paths.
   * `timeoutMs`: for the few calls that wait on the workers (measuring links), longer than a read.
   */
  async call<K extends OperatorEndpoint>(name: K, params: EndpointParams<K>, body: EndpointBody<K>, notFound?: string, timeoutMs = TIMEOUT_MS): Promise<EndpointReply<K>> {
    const endpoint = workerApi[name];
    const path = (endpoint.path.build as (...p: EndpointParams<K>) => string)(...params);
    const reply = await this.client.request(endpoint.method as 'GET' | 'POST', path, body, timeoutMs);
    if (reply.kind !== 'ok') throw this.failure(reply, notFound);
    const checked = readReply(name, reply.body);
    if (checked === null) {
      throw new OperatorFailure(`${this.where()} answered ${name} with something that is not a GPU Share reply; is it a GPU Share coordinator of this version?`, EXIT.unreachable, 'not-a-coordinator');
    }
    return checked;
  }

  /**
   * Opens a file endpoint (an artifact tarball) and resolves, once the coordinator answered 2xx, with its body as
   * a stream for the caller to pipe; any other answer fails as `call` does. Same token, same pinned certificate
   * (checked before a byte is sent); the deadlines are for the answer (`answerMs`) and then for silence (no byte
   * in `silenceMs`), not for the whole transfer.
   */
  download<K extends DownloadEndpoint>(
    name: K,
    params: EndpointParams<K>,
    notFound?: string,
    deadlines: { answerMs: number; silenceMs: number } = { answerMs: DOWNLOAD_ANSWER_MS, silenceMs: TIMEOUT_MS },
  ): Promise<{ body: Readable; sizeBytes: number | null }> {
    const problem = this.client.trustProblem();
    if (problem) return Promise.reject(this.failure({ kind: 'untrusted', message: problem }, notFound));
    const url = new URL((workerApi[name].path.build as (...p: EndpointParams<K>) => string)(...params), this.client.base);
    const pinned = this.client.connector;
    const agent = url.protocol === 'https:' ? new https.Agent() : new http.Agent({ lookup: loopbackOnlyLookup() } as http.AgentOptions);
    if (pinned) agent.createConnection = pinned as https.Agent['createConnection'];
    const send = url.protocol === 'https:' ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const fail = (reply: Exclude<ApiReply, { kind: 'ok' }>) => {
        agent.destroy();
        reject(this.failure(reply, notFound));
      };
      const req = send(url, { method: 'GET', agent, headers: this.client.authHeaders() });
      req.setTimeout(deadlines.answerMs, () => req.destroy(new RequestTimeoutError()));
      req.on('error', (error) => {
        const message = describeNetworkError(error, this.client.base);
        fail((error as { code?: string }).code === CERT_MISMATCH ? { kind: 'untrusted', message } : { kind: 'network', message });
      });
      req.on('response', (res) => {
        req.setTimeout(deadlines.silenceMs); // the answer came: from here on, only silence is cut off
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          res.once('close', () => agent.destroy());
          const length = Number(res.headers['content-length']);
          resolve({ body: res, sizeBytes: Number.isSafeInteger(length) ? length : null });
          return;
        }
        if (status >= 300 && status < 400) {
          res.destroy();
          return fail({ kind: 'protocol', status, message: `${this.where()} answered with a redirect (${status}); a GPU Share coordinator never redirects, so something else answers at this address` });
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (text.length > MAX_ERROR_BYTES) res.destroy();
        });
        res.on('error', () => undefined); // a cut-off error answer still closes, with what arrived
        res.on('close', () => fail({ kind: 'http-error', status, message: errorSentence(text, status) }));
      });
      req.end();
    });
  }

  close(): void {
    this.client.close();
  }

  private where(): string {
    return this.target.url.origin;
  }

  private failure(reply: Exclude<ApiReply, { kind: 'ok' }>, notFound: string | undefined): OperatorFailure {
    switch (reply.kind) {
      case 'network':
        return new OperatorFailure(`${this.notRunning(reply.message)}`, EXIT.unreachable, this.target.urlSource === 'default' ? 'not-running' : 'unreachable');
      case 'untrusted':
        return new OperatorFailure(this.untrusted(reply.message), EXIT.unreachable, 'untrusted');
      case 'protocol':
        return new OperatorFailure(`${reply.message}; is ${this.where()} a GPU Share coordinator?`, EXIT.unreachable, 'not-a-coordinator');
      case 'http-error':
        // 403: the coordinator knew the token, but it is the join token, which opens no operator action.
        if (reply.status === 401 || reply.status === 403) {
          return new OperatorFailure(
            `the coordinator at ${this.where()} refused the operator token from ${this.target.tokenSource} (${reply.message}). ` +
              `The right one is in secrets.json in that coordinator's data folder: pass --data-dir DIR (as given to \`gpu-share serve\`), or set ${OPERATOR_TOKEN_ENV}; ` +
              'the ?token= of the page\'s URL is the page token, which opens only the page.',
            EXIT.unauthorized,
            'unauthorized',
          );
        }
        // 421: the page port of `gpu-share serve`, which says which --url to use instead (cli-address.ts).
        if (reply.status === 421) return new OperatorFailure(reply.message, EXIT.unreachable, 'not-a-coordinator');
        if (reply.status === 404) return new OperatorFailure(notFound ?? reply.message, EXIT.notFound, 'not-found');
        return new OperatorFailure(reply.message, EXIT.refused, 'refused');
    }
  }

  /** Another certificate than the pinned one: nothing was sent; say which fingerprints and where ours came from. */
  private untrusted(detail: string): string {
    const shown = /fingerprint ([0-9a-f]{64})/.exec(detail)?.[1];
    if (!shown) return `refused to talk to ${this.where()}: ${detail}`;
    return (
      `refused to talk to ${this.where()}: it shows a certificate with SHA-256 fingerprint ${shown}, not ${this.target.certSha256} (from ${this.target.certSource}), ` +
      'so nothing was sent to it. If GPU Share there made a new certificate, take the fingerprint from its join command (`gpu-share serve` prints it); ' +
      'if not, something else is posing as the coordinator.'
    );
  }

  /** No answer: say where we looked, why there, and how to start a coordinator. */
  private notRunning(detail: string): string {
    const t = this.target;
    const start = 'Start GPU Share with `gpu-share serve` (or open the desktop app) and try again';
    switch (t.urlSource) {
      case 'record':
        return `the coordinator recorded in ${t.dataDir} (process ${t.recordPid}) does not answer at ${this.where()}: ${detail}. It may still be starting; try again in a moment.`;
      case 'default':
        return (
          `GPU Share does not seem to be running: ${t.recordNote ?? `no running coordinator has recorded itself in ${t.dataDir}`}, ` +
          `and at the default address ${detail}. ${start}, or pass --url URL (and --data-dir DIR for its token).`
        );
      case 'env':
        return `no coordinator answers at ${this.where()} (from GPU_SHARE_URL): ${detail}. Check the URL, or ${start.charAt(0).toLowerCase()}${start.slice(1)}.`;
      case 'flag':
        return `no coordinator answers at ${this.where()}: ${detail}. Check --url, or ${start.charAt(0).toLowerCase()}${start.slice(1)}.`;
    }
  }
}

/** The `{ "error": … }` sentence of an error answer, else its first words. */
function errorSentence(text: string, status: number): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error.slice(0, 2000);
  } catch {
    // Not JSON: show what it is.
  }
  return text.slice(0, 300) || `HTTP ${status}`;
}
