/**
 * One client's connection to a coordinator's HTTP API: the URL checked for trust (a https coordinator only with
 * its pinned certificate, plain http only where clear text is allowed), kept-alive sockets, each TLS socket
 * checked against the pin before a byte is sent, and JSON requests answered as tagged replies. The operator CLI
 * speaks through it as it is; the worker agent's CoordinatorClient builds on it with the join, the session and
 * request signing.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { normalizeCertSha256 } from '../../../src-shared/cert-fingerprint';
import type { ClearTextUse } from '../../../src-shared/cluster/clear-text';
import { interpretReply, type ApiReply } from './api-reply';
import { trustProblem } from './coordinator-url';
import { postJson, type BodySigner, type PostOptions, type RawReply } from './http-post';
import { loopbackOnlyLookup } from './loopback-lookup';
import { pinnedConnector, type Connector } from './pinned-connection';

export interface ApiConnectionOptions {
  /** SHA-256 fingerprint of the coordinator's certificate (any common spelling); required for https. */
  certSha256?: string;
  /** A bearer token sent with every request (the operator token). */
  bearerToken?: string;
  /** Whose clear-text rules apply to a plain http URL (clear-text.ts). */
  use?: ClearTextUse;
  /** Stand-in for the HTTP layer, for tests. */
  transport?: (opts: PostOptions) => Promise<RawReply>;
  /** Stand-in for dns.lookup, for tests (a resolver that maps `localhost` elsewhere). */
  resolve?: typeof dns.lookup;
}

export class ApiConnection {
  readonly base: URL;
  /** The pinned TLS connection every socket is made with (null over http): for requests that build their own agent. */
  readonly connector: Connector | null;
  /** The fingerprint pinned for this URL (lower-case hex), or null over http. */
  readonly certSha256: string | null;
  /** The kept-alive sockets (pinned over https), for transfers that are not JSON (a file upload). */
  readonly agent: http.Agent;
  private readonly problem: string | null;
  private readonly bearerToken: string | null;
  private readonly transport: (opts: PostOptions) => Promise<RawReply>;

  constructor(url: string | URL, options: ApiConnectionOptions = {}) {
    this.base = new URL(String(url));
    this.problem = trustProblem(this.base, options.certSha256, options.use);
    const pinnable = this.base.protocol === 'https:' && !this.problem;
    this.certSha256 = pinnable ? (normalizeCertSha256(options.certSha256!) ?? null) : null;
    this.connector = pinnable ? pinnedConnector(options.certSha256!) : null;
    this.bearerToken = options.bearerToken ?? null;
    this.transport = options.transport ?? postJson;
    if (this.base.protocol === 'https:') {
      const agent = new https.Agent({ keepAlive: true, maxSockets: 4 });
      // Unpinned https never connects: request() refuses first. Pinned: every socket is checked before use.
      if (this.connector) agent.createConnection = this.connector as https.Agent['createConnection'];
      this.agent = agent;
    } else {
      // Plain http only reaches loopback (clear-text.ts): `localhost` must resolve there before a socket opens.
      this.agent = new http.Agent({ keepAlive: true, maxSockets: 4, lookup: loopbackOnlyLookup(options.resolve) } as http.AgentOptions);
    }
  }

  /** Why this connection will not talk to its URL (https without a fingerprint, …); null when it will. */
  trustProblem(): string | null {
    return this.problem;
  }

  /** Headers every request carries: the bearer token, when there is one. */
  authHeaders(): Record<string, string> {
    return this.bearerToken ? { authorization: `Bearer ${this.bearerToken}` } : {};
  }

  /** Sends `body` as JSON (a GET sends none) to `path` and answers a tagged reply; never throws. */
  async request(method: 'GET' | 'POST', path: string, body: unknown, timeoutMs: number, headers: Record<string, string> = {}, sign?: BodySigner): Promise<ApiReply> {
    if (this.problem) return { kind: 'untrusted', message: this.problem };
    const url = new URL(path, this.base);
    try {
      return interpretReply(await this.transport({ url, method, headers: { ...this.authHeaders(), ...headers }, body: JSON.stringify(body ?? null), timeoutMs, agent: this.agent, ...(sign ? { sign } : {}) }), this.base);
    } catch (error) {
      return interpretReply({ kind: 'failed', error }, this.base);
    }
  }

  /** Frees the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }
}
