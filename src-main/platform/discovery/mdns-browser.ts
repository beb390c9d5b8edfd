/**
 * Listens for coordinators advertising `_gpu-share._tcp` and keeps the list of those in this machine's cluster
 * (see discovery-record.ts): the join panel shows it, `gpu-share worker --discover` picks from it. It asks again
 * every few seconds, so a coordinator that started later or whose answer was lost shows up, and one not heard
 * for its record's TTL goes away; a goodbye removes it at once.
 */
import type { Browser, Service } from 'bonjour-service';
import type { DiscoveredCoordinator } from '../../../src-shared/nodes/ipc-discovery';
import { readAdvert, SERVICE_TYPE } from './discovery-record';
import { closeMdns, openMdns } from './mdns-socket';

const REQUERY_MS = 3_000;

export interface BrowserOptions {
  /** Pre-shared cluster name: only coordinators tagged with it are kept; without one, only untagged ones. */
  clusterName?: string | undefined;
  onChange?: (coordinators: DiscoveredCoordinator[]) => void;
  onProblem: (message: string) => void;
  now?: () => number;
  requeryMs?: number;
}

export class CoordinatorBrowser {
  private readonly bonjour;
  private readonly browser: Browser;
  private readonly timer: NodeJS.Timeout;
  private readonly now: () => number;
  private closed: Promise<void> | null = null;

  constructor(private readonly opts: BrowserOptions) {
    this.now = opts.now ?? Date.now;
    this.bonjour = openMdns({ onProblem: opts.onProblem });
    this.browser = this.bonjour.find({ type: SERVICE_TYPE });
    const changed = () => this.opts.onChange?.(this.list());
    for (const event of ['up', 'down', 'txt-update', 'srv-update'] as const) this.browser.on(event, changed);
    this.timer = setInterval(() => {
      this.browser.expire();
      this.browser.update();
    }, opts.requeryMs ?? REQUERY_MS);
    this.timer.unref();
  }

  /** Coordinators heard and still fresh, in this machine's cluster, one per URL and fingerprint. */
  list(): DiscoveredCoordinator[] {
    const seen = new Map<string, DiscoveredCoordinator>();
    for (const service of this.browser.services) {
      const address = reachableAddress(service);
      if (!address) continue;
      const found = readAdvert(
        { txt: service.txt as Record<string, unknown> | undefined, address, port: service.port },
        { clusterName: this.opts.clusterName, now: service.lastSeen ?? this.now() },
      );
      if (found) seen.set(`${found.url} ${found.certSha256}`, found);
    }
    return [...seen.values()].sort((a, b) => a.name.localeCompare(b.name) || a.url.localeCompare(b.url));
  }

  stop(): Promise<void> {
    if (!this.closed) {
      clearInterval(this.timer);
      this.browser.stop();
      this.closed = closeMdns(this.bonjour);
    }
    return this.closed;
  }
}

/**
 * The address its answer came from, which is reachable from here by construction; host names are not used (on
 * a home LAN they often do not resolve). An IPv6 sender falls back to an advertised IPv4 address.
 */
function reachableAddress(service: Service): string | null {
  if (service.referer?.family === 'IPv4') return service.referer.address;
  return service.addresses?.find((a) => /^\d+\.\d+\.\d+\.\d+$/.test(a)) ?? null;
}

/** Browses for `waitMs` and returns what was heard (for the CLI). */
export async function discoverCoordinators(opts: { clusterName?: string | undefined; waitMs: number; onProblem: (message: string) => void }): Promise<DiscoveredCoordinator[]> {
  const browser = new CoordinatorBrowser({ clusterName: opts.clusterName, onProblem: opts.onProblem, requeryMs: Math.max(500, Math.floor(opts.waitMs / 3)) });
  try {
    await new Promise((resolve) => setTimeout(resolve, opts.waitMs));
    return browser.list();
  } finally {
    await browser.stop();
  }
}
