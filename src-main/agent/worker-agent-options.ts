/** What a WorkerAgent is given, and what it tells about itself (its public API besides the class). */
import type { HardwareSnapshot } from '../../src-shared/hardware';
import type { Progress } from '../../src-shared/worker-protocol';
import type { ProbeResidencyOptions, ResidencyResult } from '../platform/hardware/residency';
import type { Clock, PtySpawner } from '../platform/ports';
import type { findPython } from '../platform/runs/python-finder';

export interface WorkerAgentOptions {
  coordinatorUrl: string;
  token: string;
  /** Node name; default the hostname. */
  name?: string;
  /** Checkpoints (<dataDir>/checkpoints/<runId>) and torchrun's logs (<dataDir>/logs/<runId>). */
  dataDir: string;
  pty: PtySpawner;
  clock?: Clock;
  detect?: () => Promise<HardwareSnapshot>;
  findPython?: typeof findPython;
  /** Address other workers reach this one at; default the local address of the connection to the coordinator. */
  advertiseHost?: string;
  /** True for the worker inside the desktop app. */
  local?: boolean;
  /** Human lines: joins, instructions, exits. */
  log?: (line: string) => void;
  /** Raw training output as it arrives (the CLI's --show-output). */
  onOutput?: (data: string) => void;
  /** Environment to find Python in and to pass (filtered) to training; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Where relative script paths resolve; default the current directory. */
  workDir?: string;
  /** Residency probe; default the nvidia-smi one from platform/hardware. */
  probeResidency?: (opts: ProbeResidencyOptions) => Promise<ResidencyResult>;
  /** SIGTERM → SIGKILL grace when stopping training; default 3 s. */
  stopGraceMs?: number;
  /** Keep a warm launcher (torch imported ahead) so relaunches skip Python's cold start (warm-launcher.ts); default off. */
  warmLauncher?: boolean;
  /** Probe residency this long after the start when no progress line came first; default 5 s. */
  residencyStartWindowMs?: number;
  /** SHA-256 fingerprint of the coordinator's certificate, from the join command; required for https URLs. */
  certSha256?: string;
  /**
   * Keep retrying the first join (1 s doubling to 30 s) while the coordinator does not answer or answers 5xx,
   * instead of failing start() at once; what `gpu-share worker` wants. A refusal still fails at once.
   */
  retryFirstJoin?: boolean;
  /** Bound of the project cache (<dataDir>/projects: LRU, a run's files never evicted while it uses them); default 10 GiB. */
  projectCacheBytes?: number;
  /** Open the presence WebSocket after each join (default true). */
  presence?: boolean;
}

export type AgentPhase = 'idle' | 'joining' | 'joined' | 'lost' | 'stopping' | 'stopped';

export interface AgentExit {
  reason: 'stopped' | 'drained';
  detail: string;
}

export interface AgentStatus {
  phase: AgentPhase;
  node: string;
  workerId: number | null;
  incarnation: number | null;
  coordinatorUrl: string;
  /** Every run it trains now (one per GPU set), in launch order; none: []. */
  runs: { runId: string; generation: number; pid: number | null }[];
  /** The latest progress of each run it trains now that printed one, the run that reported last at the end. */
  progress: Progress[];
}
