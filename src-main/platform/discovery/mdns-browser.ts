/**
 * Listens for coordinators advertising `_gpu-share._tcp` and keeps the list of those in this machine's cluster
 * (see discovery-record.ts): the join panel shows it, `gpu-share worker --discover` picks from it. It asks again
 * every few seconds, so a coordinator that started later or whose answer was lost shows up, and one not heard
 * for its record's TTL goes away; a goodbye removes it at once.
 *
 * Anyone on the LAN can answer for any instance name, and bonjour-service keeps one service per name (the last
 * answer, or the first when the records are the same), so a rogue repeating the genuine coordinator's name would
 * hide it. The browser therefore keeps every answer it hears, one per address and fingerprint (at most
 * MAX_HEARD), and leaves telling them apart to the join proof (src-main/agent/coordinator-proof.ts).
 */
import type { Browser, Service } from 'bonjour-service';
import type { DiscoveredCoordinator } from '../../../src-shared/nodes/ipc-discovery';
import { readAdvert, SERVICE_TYPE } from './discovery-record';
import { closeMdns, openMdns } from './mdns-socket';

const REQUERY_MS = 3_000;
/** Answers kept at once: a flood of adverts with made-up addresses cannot grow memory. */
export const MAX_HEARD = 64;
/** How long an answer counts when its record gives no TTL. */
const DEFAULT_TTL_MS = 120_000;

interface Heard {
  coordinator: DiscoveredCoordinator;
  fqdn: string;
  expiresAt: number;
}

/** bonjour-service's Browser internals used to see every answer (a pinned dependency; checked at start). */
interface BrowserInternals {
  mdns?: NodeJS.EventEmitter;
  name?: string;
  txt?: unknown;
  buildServicesFor?: (name: string, packet: unknown, txt: unknown, referer: unknown, receiveTime: number) => Service[];
}

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
  /** Every answer heard, by "url fingerprint", oldest first. */
  private readonly heard = new Map<string, Heard>();

  constructor(private readonly opts: BrowserOptions) {
    this.now = opts.now ?? Date.now;
    this.bonjour = openMdns({ onProblem: opts.onProblem });
    this.browser = this.bonjour.find({ type: SERVICE_TYPE });
    const changed = () => this.opts.onChange?.(this.list());
    for (const event of ['up', 'txt-update', 'srv-update'] as const) this.browser.on(event, (service: Service) => this.record(service));
    for (const event of ['up', 'down', 'txt-update', 'srv-update'] as const) this.browser.on(event, changed);
    // A goodbye for an instance name: forget what was heard under it (a genuine coordinator's next answer brings it back).
    this.browser.on('down', (service: Service) => this.forget(service.fqdn));
    const internals = this.browser as unknown as BrowserInternals;
    if (internals.mdns && internals.name && internals.buildServicesFor) {
      // Every answer, not only those that change bonjour-service's one service per name.
      internals.mdns.on('response', (packet: unknown, rinfo: unknown) => {
        let services: Service[] = [];
        try {
          services = internals.buildServicesFor!.call(this.browser, internals.name!, packet, internals.txt, rinfo, this.now());
        } catch {
          return; // a malformed packet: bonjour-service's own handler copes with it
        }
        const before = this.heard.size;
        for (const service of services) this.record(service);
        if (this.heard.size !== before) changed();
      });
    }
    this.timer = setInterval(() => {
      this.browser.expire();
      this.browser.update();
    }, opts.requeryMs ?? REQUERY_MS);
    this.timer.unref();
  }

  /**
   * Coordinators heard and still fresh, in this machine's cluster, one per URL and fingerprint — including several
   * that answered for the same instance name (only the join proof tells which, if any, is genuine).
   */
  list(): DiscoveredCoordinator[] {
    const now = this.now();
    for (const [key, h] of this.heard) if (h.expiresAt <= now) this.heard.delete(key);
    return [...this.heard.values()].map((h) => h.coordinator).sort((a, b) => a.name.localeCompare(b.name) || a.url.localeCompare(b.url));
  }

  /** Keeps one answer (its sender's address, port and advert), refreshed if heard before; the oldest go first past MAX_HEARD. */
  private record(service: Service): void {
    const address = reachableAddress(service);
    if (!address || !service.fqdn) return;
    const now = this.now();
    const found = readAdvert({ txt: service.txt as Record<string, unknown> | undefined, address, port: service.port }, { clusterName: this.opts.clusterName, now });
    if (!found) return;
    const key = `${found.url} ${found.certSha256}`;
    this.heard.delete(key); // re-inserted last: the map stays in order of last hearing
    this.heard.set(key, { coordinator: found, fqdn: service.fqdn, expiresAt: now + (service.ttl ? service.ttl * 1000 : DEFAULT_TTL_MS) });
    while (this.heard.size > MAX_HEARD) this.heard.delete(this.heard.keys().next().value as string);
  }

  private forget(fqdn: string): void {
    for (const [key, h] of this.heard) if (h.fqdn === fqdn) this.heard.delete(key);
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
