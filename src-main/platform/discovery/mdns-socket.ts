/**
 * One bonjour-service instance (its own multicast-dns socket on port 5353, shared with avahi / mDNSResponder
 * through SO_REUSEADDR). multicast-dns emits 'error' for EACCES / EADDRINUSE and nobody in bonjour-service
 * listens, which would crash the process: here every failure becomes a call of `onProblem` instead.
 */
import { Bonjour } from 'bonjour-service';

export interface MdnsSocketOptions {
  /** IPv4 address of the interface to speak on (a coordinator bound to one LAN address); default: all. */
  interfaceAddress?: string | undefined;
  onProblem: (message: string) => void;
}

export function openMdns(opts: MdnsSocketOptions): Bonjour {
  const mdnsOptions = opts.interfaceAddress ? { interface: opts.interfaceAddress, bind: '0.0.0.0' } : {};
  const bonjour = new Bonjour(mdnsOptions as object, (error: unknown) => opts.onProblem(describe(error)));
  // bonjour-service keeps the multicast-dns emitter private; without a listener an 'error' event would throw.
  const socket = (bonjour as unknown as { server?: { mdns?: NodeJS.EventEmitter } }).server?.mdns;
  socket?.on('error', (error: unknown) => opts.onProblem(`mDNS: ${describe(error)}`));
  socket?.on('warning', () => undefined);
  return bonjour;
}

/** Closes the socket; resolves even when it was already closed. */
export function closeMdns(bonjour: Bonjour): Promise<void> {
  return new Promise((resolve) => {
    try {
      bonjour.destroy(() => resolve());
    } catch {
      resolve();
    }
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
