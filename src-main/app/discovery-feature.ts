/**
 * LAN discovery in the app: the coordinator advertises itself over mDNS when it listens beyond loopback (unless
 * turned off), and the "Join a cluster" panel lists the coordinators this machine hears that prove they hold the
 * join token the person typed (proven-coordinators.ts). Listening starts only when the panel first asks, so an app
 * nobody joins from sends no queries. app-core.ts builds it next to the coordinator and spreads its handlers.
 */
import { version } from '../../package.json';

import type { DiscoveredCoordinator, DiscoveryRequestResults } from '../../src-shared/nodes/ipc-discovery';
import type { RequestHandlers } from '../../src-shared/ipc';
import type { UserNotification } from '../../src-shared/training';
import { startAdvertiser, type Advertiser } from '../platform/discovery/mdns-advertiser';
import { CoordinatorBrowser } from '../platform/discovery/mdns-browser';
import { proveCoordinator } from '../agent/coordinator-proof';
import { ProvenCoordinators, type Prover } from './proven-coordinators';

/** How long a heard coordinator has to answer the join challenge before it is left out of the list. */
const PROOF_TIMEOUT_MS = 3_000;

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
  /** The list of coordinators heard that prove the token changed (for the onDiscovered event). */
  onChange?: (coordinators: DiscoveredCoordinator[]) => void;
  /** Stand-in for the join challenge, for tests. */
  prove?: Prover;
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
  const proven = new ProvenCoordinators(opts.prove ?? ((c, token) => proveCoordinator({ url: c.url, certSha256: c.certSha256, token, timeoutMs: PROOF_TIMEOUT_MS })));
  const heardChanged = (heard: DiscoveredCoordinator[]): void => {
    void proven.filter(heard).then((list) => opts.onChange?.(list));
  };

  return {
    advertising: advertiser !== null,
    handlers: {
      getDiscovered: async ({ token }) => {
        browser ??= new CoordinatorBrowser({ clusterName: opts.clusterName, onProblem: problem, onChange: heardChanged });
        proven.useToken(token);
        return proven.filter(browser.list());
      },
    },
    async stop() {
      await Promise.all([advertiser?.stop(), browser?.stop()]);
    },
  };
}
