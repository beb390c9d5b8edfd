/**
 * Signs each request to the coordinator with the node's key (node-identity.ts): a fresh time and nonce, and the
 * SHA-256 of exactly the bytes sent, so a request cannot be replayed later nor altered on the way without the
 * coordinator noticing. The coordinator checks it in src-main/core/api/request-signature.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { SIGNATURE_HEADERS, signedRequestText } from '../../src-shared/worker-protocol';
import type { NodeIdentity } from './node-identity';
import type { BodySigner } from '../platform/net/http-post';

export type { BodySigner };

export function sha256Hex(body: Buffer | string): string {
  return createHash('sha256').update(body).digest('hex');
}

/** The three signature headers for one request; `bodySha256Hex` is of the body sent (or, for an upload, the announced one). */
export function signatureHeaders(identity: NodeIdentity, method: string, pathAndQuery: string, bodySha256Hex: string, now: number = Date.now()): Record<string, string> {
  const time = String(now);
  const nonce = randomBytes(16).toString('base64url');
  return {
    [SIGNATURE_HEADERS.time]: time,
    [SIGNATURE_HEADERS.nonce]: nonce,
    [SIGNATURE_HEADERS.signature]: identity.sign(signedRequestText(method, pathAndQuery, time, nonce, bodySha256Hex)),
  };
}

/** A signer for http-post.ts: signs the exact body bytes it is about to send. */
export function bodySigner(identity: NodeIdentity): BodySigner {
  return (method, pathAndQuery, body) => signatureHeaders(identity, method, pathAndQuery, sha256Hex(body));
}
