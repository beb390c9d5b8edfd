/**
 * What a coordinator is started with: its clock and tokens, and the cluster's settings (serve's flags; the desktop
 * app passes the same). Every bound here is the cluster's, never a run's.
 */
import type { Clock } from '../../../platform/ports';
import type { OutputBudgetOptions } from '../runs';

export interface CoordinatorServiceOptions {
  clock: Clock;
  joinToken: string;
  operatorToken: string;
  heartbeatIntervalMs?: number;
  /** The cluster's: a machine silent for longer is declared failed, whatever it serves (serve --heartbeat-timeout; default 5 s). */
  heartbeatTimeoutMs?: number;
  /** Host for --rdzv_endpoint instead of the first worker's advertised host (the port stays the worker's). */
  rdzvHostOverride?: string;
  /** The cluster's bound: joins are refused beyond this many machines joined at once (serve --max-workers; default 10,000). Never a run's. */
  maxWorkers?: number;
  /** Accept advertised hosts other than where workers connect from (NAT); off by default, see worker-gate.ts. */
  trustAdvertisedHosts?: boolean;
  outputBudget?: OutputBudgetOptions;
  /** How long, after a restart, the workers that were live may take to re-attach (serve --failover-grace; default 60 s, 0: none). */
  failoverGraceMs?: number;
  /** serve --link-refresh: idle workers' links are measured again after this long (default 300 s; 0: never). */
  linkRefreshMs?: number;
}
