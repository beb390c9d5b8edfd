/**
 * The operator API of an app running in a namespace host, from the test process. A test process cannot
 * open a TCP connection inside another network namespace, so a relay inside the host (proxy-process.ts,
 * faults off) listens on a Unix socket (a file: not tied to any network namespace) and forwards to the
 * coordinator's address there. Over https the certificate is checked against the fingerprint the app
 * printed (self-signed, so there is no CA to ask): the same pin a worker uses.
 */
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';

export interface ApiClientOptions {
  socketPath: string;
  /** Speak TLS through the relay. */
  tls: boolean;
  /** Required with tls: lowercase hex without colons. */
  certSha256: string | null;
  token: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class ApiClient {
  constructor(private readonly opts: ApiClientOptions) {
    if (opts.tls && !opts.certSha256) throw new Error('an https coordinator needs a certificate fingerprint to pin');
  }

  private connect(): net.Socket {
    const raw = net.connect(this.opts.socketPath);
    if (!this.opts.tls) return raw;
    // rejectUnauthorized: false because the cert is self-signed; the pin below is the real check.
    return tls.connect({ socket: raw, rejectUnauthorized: false });
  }

  /** One request; resolves with the parsed JSON body, or throws ApiError with the coordinator's message. */
  request<T>(method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 10_000): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise<T>((resolve, reject) => {
      const req = http.request(
        {
          method,
          path,
          host: 'coordinator',
          createConnection: () => this.connect(),
          headers: { authorization: `Bearer ${this.opts.token}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
          timeout: timeoutMs,
        },
        (res) => {
          const pinError = this.checkPin(res.socket);
          if (pinError) {
            res.destroy();
            reject(new Error(pinError));
            return;
          }
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              reject(new ApiError(res.statusCode ?? 0, `${method} ${path} → ${res.statusCode}: not JSON: ${text.slice(0, 200)}`));
              return;
            }
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) resolve(json as T);
            else reject(new ApiError(status, `${method} ${path} → ${status}: ${(json as { error?: string }).error ?? text}`));
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** A binary GET (an artifact's tarball): the body's bytes, or ApiError for a non-2xx answer. */
  requestBytes(path: string, timeoutMs = 30_000): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const req = http.request(
        { method: 'GET', path, host: 'coordinator', createConnection: () => this.connect(), headers: { authorization: `Bearer ${this.opts.token}` }, timeout: timeoutMs },
        (res) => {
          const pinError = this.checkPin(res.socket);
          if (pinError) {
            res.destroy();
            reject(new Error(pinError));
            return;
          }
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            const body = Buffer.concat(chunks);
            if (status >= 200 && status < 300) resolve(body);
            else reject(new ApiError(status, `GET ${path} → ${status}: ${body.toString('utf8').slice(0, 300)}`));
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end();
    });
  }

  private checkPin(socket: net.Socket): string | null {
    if (!this.opts.tls) return null;
    const cert = (socket as tls.TLSSocket).getPeerCertificate?.();
    const seen = cert?.fingerprint256?.replace(/:/g, '').toLowerCase();
    return seen === this.opts.certSha256 ? null : `the coordinator's certificate (sha256 ${seen ?? 'none'}) is not the one it printed (${this.opts.certSha256})`;
  }
}
