/**
 * TLS connections to the coordinator that trust one certificate: the one whose SHA-256 fingerprint the join
 * command carries. The coordinator's certificate is self-signed, so the usual CA check cannot apply; instead the
 * fingerprint is compared on 'secureConnect', before the socket is handed to HTTP or WebSocket code, so not one
 * request byte (the join token least of all) reaches a server that is not the coordinator we were given.
 */
import type http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { normalizeCertSha256 } from '../../../src-shared/cert-fingerprint';

/** Code of the error a connection to a server with another certificate fails with. */
export const CERT_MISMATCH = 'ERR_GPU_SHARE_CERT_MISMATCH';

export class CertificateMismatchError extends Error {
  readonly code = CERT_MISMATCH;
  constructor(
    readonly where: string,
    readonly expected: string,
    readonly received: string | null,
  ) {
    super(
      `this is not the coordinator you were given: ${where} showed a certificate with SHA-256 fingerprint ${received ?? '(none)'}, ` +
        `but the join command says ${expected}. Nothing was sent to it. Copy the join command again from the coordinator's "Add a worker" panel; ` +
        'if it is the same, someone may be posing as the coordinator on this network.',
    );
    this.name = 'CertificateMismatchError';
  }
}

/** What node:http's Agent and ClientRequest (and so `ws`) accept as createConnection. */
export type Connector = NonNullable<http.ClientRequestArgs['createConnection']>;

/**
 * A createConnection function (the callback form that node:http's Agent and ClientRequest accept, and `ws`
 * passes through) that opens TLS to the requested host and calls back only once its certificate is the pinned one.
 */
export function pinnedConnector(fingerprint256: string): Connector {
  const expected = normalizeCertSha256(fingerprint256);
  if (!expected) throw new Error(`"${fingerprint256}" is not a SHA-256 fingerprint (64 hex digits)`);
  return (options, callback) => {
    const host = String(options.hostname ?? options.host ?? 'localhost').replace(/^\[(.*)\]$/, '$1');
    const port = Number(options.port ?? 443);
    const where = `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
    let settled = false;
    const settle = (error: Error | null, socket?: tls.TLSSocket) => {
      if (settled) return;
      settled = true;
      if (socket) callback(null, socket);
      else callback(error ?? new Error('connection failed'), undefined as never);
    };
    const socket = tls.connect({
      host,
      port,
      // SNI only for names (an IP there is a protocol error); the name is not what we check anyway.
      ...(net.isIP(host) ? {} : { servername: host }),
      // The source address an Agent or request asks for (a machine with several picks which one the server sees).
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      // The certificate is self-signed: we check its fingerprint ourselves below, before any byte is sent.
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
    });
    socket.once('secureConnect', () => {
      const received = normalizeCertSha256(socket.getPeerCertificate()?.fingerprint256 ?? '');
      if (received !== expected) {
        socket.destroy();
        settle(new CertificateMismatchError(where, expected, received));
        return;
      }
      socket.removeListener('error', onEarlyError);
      settle(null, socket);
    });
    const onEarlyError = (error: Error) => settle(error);
    socket.once('error', onEarlyError);
    // Errors after the handover belong to whoever took the socket; until then, a destroy without an error
    // (the request timed out) needs no callback: the caller has given up already.
    return undefined;
  };
}
