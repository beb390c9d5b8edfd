/**
 * A coordinator announcing itself on the LAN as `_gpu-share._tcp` (see discovery-record.ts for what it says).
 * Only a coordinator that listens beyond loopback advertises: it then speaks HTTPS, and the fingerprint in the
 * advert is what workers pin. The join token is never part of it.
 */
import os from 'node:os';
import { closeMdns, openMdns } from './mdns-socket';
import { encodeAdvert, SERVICE_TYPE } from './discovery-record';

export interface AdvertiserOptions {
  port: number;
  certSha256: string;
  version: string;
  /** Pre-shared cluster name: only its tag is advertised. */
  clusterName?: string | undefined;
  /** Display name (default: this machine's hostname). */
  name?: string;
  /** The coordinator's own IPv4 address when it is bound to one (default: every interface). */
  interfaceAddress?: string | undefined;
  onProblem: (message: string) => void;
}

export interface Advertiser {
  /** Sends the goodbye (browsers drop it at once) and closes the socket. */
  stop(): Promise<void>;
}

export function startAdvertiser(opts: AdvertiserOptions): Advertiser {
  const name = opts.name ?? os.hostname();
  const txt = encodeAdvert({ name, version: opts.version, certSha256: opts.certSha256, clusterName: opts.clusterName });
  const bonjour = openMdns({ interfaceAddress: opts.interfaceAddress, onProblem: opts.onProblem });
  // The instance name must be unique on the LAN and bonjour-service cuts it at the first dot.
  const instance = `gpu-share-${name.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 40)}-${opts.port}`;
  const service = bonjour.publish({ name: instance, type: SERVICE_TYPE, port: opts.port, txt: { ...txt } });
  service.on('error', (error: unknown) => opts.onProblem(`mDNS advert: ${error instanceof Error ? error.message : String(error)}`));
  let stopped: Promise<void> | null = null;
  return {
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        const close = () => void closeMdns(bonjour).then(resolve);
        try {
          bonjour.unpublishAll(close);
        } catch {
          close();
        }
      });
      return stopped;
    },
  };
}
