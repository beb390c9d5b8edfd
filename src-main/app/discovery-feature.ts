/**
 * LAN discovery in the app: the coordinator advertises itself over mDNS when it listens beyond loopback (unless
 * turned off), and the "Join a cluster" panel lists the coordinators this machine hears. Listening starts only
 * when the panel first asks, so an app nobody joins from sends no queries. app-core.ts builds it next to the
 * coordinator and spreads its handlers.
 */
import { version } from '../../package.json';

import type { DiscoveredCoordinator, DiscoveryRequestResults } from '../../src-shared/nodes/ipc-discovery';
import type { RequestHandlers } from '../../src-shared/ipc';
import type { UserNotification } from '../../src-shared/training';
import { startAdvertiser, type Advertiser } from '../platform/discovery/mdns-advertiser';
import { CoordinatorBrowser } from '../platform/discovery/mdns-browser';

type DiscoveryHandlers = Pick<RequestHandlers, keyof DiscoveryRequestResults>;

export interface DiscoveryFeature {
  handlers: DiscoveryHandlers;
  /** Whether this coordinator advertises itself (for the Workers view / serve's output). */
  readonly advertising: boolean;
  stop(): Promise<void>;
}

export interface DiscoveryFeatureOptions {
  /** What the coordinator listens on; only a non-loopback one with a certificate is advertised. */
  coordinator: { bindHost: string; port: number; certSha256: string | null };
  /** false: never advertise (--no-advertise). Default: advertise when beyond loopback. */
  advertise?: boolean;
  /**
   * Neither advertise nor listen (GPU_SHARE_NO_DISCOVERY=1): the test suites set it, because mDNS would multicast on
   * the machine's real interfaces, and tests may only talk to loopback or to namespaces they made.
   */
  disabled?: boolean;
  /** Pre-shared cluster name: advertised as a tag, and the panel lists only that cluster's coordinators. */
  clusterName?: string;
  announce: (n: UserNotification) => void;
  /** The list heard changed (for the onDiscovered event). */
  onChange?: (coordinators: DiscoveredCoordinator[]) => void;
}

export function createDiscoveryFeature(opts: DiscoveryFeatureOptions): DiscoveryFeature {
  const problem = (message: string) =>
    opts.announce({ id: `discovery-${message}`, title: 'LAN discovery does not work', body: `${message}. Other machines can still join with the command shown in Workers.`, severity: 'warning' });
  const { bindHost, port, certSha256 } = opts.coordinator;
  let advertiser: Advertiser | null = null;
  if (opts.disabled) return { advertising: false, handlers: { getDiscovered: async () => [] }, stop: async () => undefined };
  if (opts.advertise !== false && certSha256) {
    const ownAddress = /^\d+\.\d+\.\d+\.\d+$/.test(bindHost) && bindHost !== '0.0.0.0' ? bindHost : undefined;
    advertiser = startAdvertiser({ port, certSha256, version, clusterName: opts.clusterName, interfaceAddress: ownAddress, onProblem: problem });
  }
  let browser: CoordinatorBrowser | null = null;

  return {
    advertising: advertiser !== null,
    handlers: {
      getDiscovered: async () => {
        browser ??= new CoordinatorBrowser({ clusterName: opts.clusterName, onProblem: problem, ...(opts.onChange ? { onChange: opts.onChange } : {}) });
        return browser.list();
      },
    },
    async stop() {
      await Promise.all([advertiser?.stop(), browser?.stop()]);
    },
  };
}
