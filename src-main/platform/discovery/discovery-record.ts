/**
 * What a coordinator says about itself over mDNS, and how a browser reads it back. The service is
 * `_gpu-share._tcp`; its TXT record carries a display name, the app's version, the certificate fingerprint
 * workers pin, and — when the cluster has a pre-shared name — a tag derived from that name. The name itself is
 * never advertised (neighbours would learn it), nor is the join token: a browser that knows the name computes
 * the same tag and keeps only coordinators that carry it (pmetal's PSK namespaces), so two clusters on one LAN
 * stay apart, and a browser without a name sees only untagged coordinators.
 */
import { createHmac } from 'node:crypto';
import { normalizeCertSha256 } from '../../../src-shared/cert-fingerprint';
import type { DiscoveredCoordinator } from '../../../src-shared/nodes/ipc-discovery';

/** bonjour-service's type name: on the wire `_gpu-share._tcp.local`. */
export const SERVICE_TYPE = 'gpu-share';
const TAG_LABEL = 'gpu-share-cluster';
/** 16 bytes of the HMAC: enough that two clusters never collide by chance, short in a TXT string. */
const TAG_HEX_LENGTH = 32;
const TAG_PATTERN = /^[0-9a-f]{32}$/;
const CLUSTER_NAME_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,126}[\x21-\x7e])?$/;
const DISPLAY_NAME_MAX = 63;

/** The TXT keys, as strings (TXT values are byte strings on the wire). */
export interface AdvertTxt {
  name: string;
  version: string;
  cert: string;
  cluster?: string;
}

/** Why a pre-shared cluster name is unusable, or null: printable ASCII, 1–128 characters, no edge spaces. */
export function clusterNameProblem(name: string): string | null {
  return CLUSTER_NAME_PATTERN.test(name) ? null : `the cluster name "${name}" must be 1 to 128 printable ASCII characters, not starting or ending with a space`;
}

/** HMAC-SHA256 keyed by the cluster name over a fixed label, truncated: the same name gives the same tag everywhere. */
export function clusterTag(clusterName: string): string {
  return createHmac('sha256', clusterName).update(TAG_LABEL).digest('hex').slice(0, TAG_HEX_LENGTH);
}

export function encodeAdvert(opts: { name: string; version: string; certSha256: string; clusterName?: string | undefined }): AdvertTxt {
  const cert = normalizeCertSha256(opts.certSha256);
  if (!cert) throw new Error(`not a SHA-256 certificate fingerprint: ${opts.certSha256}`);
  return {
    name: opts.name.slice(0, DISPLAY_NAME_MAX),
    version: opts.version,
    cert,
    ...(opts.clusterName !== undefined ? { cluster: clusterTag(opts.clusterName) } : {}),
  };
}

/** A TXT value as bonjour-service decodes it: a string, or a Buffer when it asked for binary. */
function txtString(txt: Record<string, unknown>, key: string): string | undefined {
  const v = txt[key];
  if (typeof v === 'string') return v;
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return undefined;
}

export interface HeardAdvert {
  txt: Record<string, unknown> | undefined;
  /** Where the coordinator is reached: the address the answer came from (or one from its A records). */
  address: string;
  port: number;
}

/**
 * The coordinator an answer describes, when it is a well-formed GPU Share advert in the browser's cluster; null
 * for foreign, malformed or other clusters' adverts (they are simply not shown).
 */
export function readAdvert(heard: HeardAdvert, browser: { clusterName?: string | undefined; now: number }): DiscoveredCoordinator | null {
  const txt = heard.txt ?? {};
  const cert = normalizeCertSha256(txtString(txt, 'cert') ?? '');
  const tag = txtString(txt, 'cluster');
  if (!cert || !Number.isInteger(heard.port) || heard.port < 1 || heard.port > 65535 || !heard.address) return null;
  if (tag !== undefined && !TAG_PATTERN.test(tag)) return null;
  if (!inCluster(tag, browser.clusterName)) return null;
  const host = heard.address.includes(':') ? `[${heard.address}]` : heard.address;
  const name = (txtString(txt, 'name') ?? '').replace(/[^\x20-\x7e]/g, '').slice(0, DISPLAY_NAME_MAX) || heard.address;
  const version = txtString(txt, 'version');
  return {
    name,
    url: `https://${host}:${heard.port}`,
    certSha256: cert,
    ...(browser.clusterName !== undefined ? { clusterName: browser.clusterName } : {}),
    ...(version ? { version: version.slice(0, 32) } : {}),
    seenAt: browser.now,
  };
}

/** With a name: only that name's tag. Without one: only untagged coordinators (a named cluster is private). */
export function inCluster(tag: string | undefined, clusterName: string | undefined): boolean {
  return clusterName === undefined ? tag === undefined : tag === clusterTag(clusterName);
}
