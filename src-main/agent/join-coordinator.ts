/**
 * Joining a coordinator: one attempt turned into a JoinError a person can act on, the timings of the answer
 * clamped to what an agent can live with, and the patient retry of the first join (a worker started before its
 * coordinator, or while the network is still coming up, waits for it instead of exiting).
 */
import type { DetectedGpu, HardwareSnapshot } from '../../src-shared/hardware';
import { NODE_NAME_PATTERN, TIMING_BOUNDS, type JoinRequest, type JoinResponse } from '../../src-shared/worker-protocol';
import type { Clock } from '../platform/ports';
import { DEFAULT_REQUEST_TIMEOUT_MS, readReply, type ApiReply, type CoordinatorClient } from './coordinator-client';
import { challengeCoordinator } from './coordinator-proof';

/** Why a join failed, in a form the CLI can turn into an exit code and a message. */
export class JoinError extends Error {
  constructor(
    /**
     * unreachable: no answer or a 5xx (worth retrying); untrusted: not the coordinator the join command named;
     * awaiting: the coordinator has not approved this machine's key yet (retried every retryAfterMs).
     */
    readonly kind: 'unreachable' | 'unauthorized' | 'refused' | 'protocol' | 'untrusted' | 'awaiting',
    message: string,
    /** For 'awaiting': when the coordinator asked to be asked again. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'JoinError';
  }
}

/** A host name as a node name the coordinator accepts ("Jo's Mac" → "Jo-s-Mac"), for when none was given. */
export function nodeNameFrom(hostname: string): string {
  if (NODE_NAME_PATTERN.test(hostname)) return hostname;
  const cleaned = hostname.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 128);
  return NODE_NAME_PATTERN.test(cleaned) ? cleaned : 'worker';
}

export const AGENT_VERSION = '0.1.0';

/** What the agent found out about its machine at start-up, which every join repeats. */
export interface MachineFacts {
  hardware: HardwareSnapshot;
  python: { path: string; torchVersion: string } | null;
  /** A TCP port free here, for the c10d store this worker may host. */
  rdzvPort: number;
  /** Every port it offers for stores, rdzvPort first: one per GPU (one run per GPU set, each may host its store). */
  rdzvPorts?: number[];
  machineId: string;
  /** The link probe server's port (link-probes.ts); undefined when it could not listen. */
  probePort?: number;
  /** The project blob server's port (project/peer-blob-server.ts); undefined when it could not listen. */
  blobPort?: number;
}

/** GPUs CUDA can be given: NVIDIA ones (others cannot be named in CUDA_VISIBLE_DEVICES). */
export function usableGpus(hardware: HardwareSnapshot | null): DetectedGpu[] {
  return (hardware?.gpus ?? []).filter((g) => g.vendor === 'nvidia');
}

export function buildJoinRequest(facts: MachineFacts, who: { node: string; advertiseHost: string; local: boolean }): JoinRequest {
  const hw = facts.hardware;
  return {
    node: who.node,
    agentVersion: AGENT_VERSION,
    machineId: facts.machineId,
    // Unified memory (Jetson, GB10) gets the 60 % reserve; left out means discrete, as older agents sent it.
    gpus: usableGpus(hw).map((g) => ({ uuid: g.uuid, name: g.name, vramTotalMb: g.vramTotalMb, ...(g.memoryType === 'unified' ? { memoryType: 'unified' as const } : {}) })),
    cpuCores: Math.max(0, Math.round(hw.logicalCores || hw.physicalCores || 0)),
    ramMb: Math.max(0, Math.round(hw.ramTotalMb || 0)),
    advertiseHost: who.advertiseHost,
    rdzvPort: facts.rdzvPort,
    ...(facts.rdzvPorts && facts.rdzvPorts.length > 1 ? { rdzvPorts: facts.rdzvPorts } : {}),
    ...(facts.probePort ? { probePort: facts.probePort } : {}),
    ...(facts.blobPort ? { blobPort: facts.blobPort } : {}),
    python: facts.python,
    local: who.local,
  };
}

const clamp = (value: number, bounds: { min: number; max: number }) => Math.min(bounds.max, Math.max(bounds.min, value));

/** A failure timeout within TIMING_BOUNDS, whatever the coordinator sent. */
export function clampTimeout(ms: number): number {
  return clamp(ms, TIMING_BOUNDS.heartbeatTimeoutMs);
}

/** The join's timings within TIMING_BOUNDS: a 1 ms interval must not make the agent spin. */
export function clampTimings(joined: JoinResponse): JoinResponse {
  return {
    ...joined,
    heartbeatIntervalMs: clamp(joined.heartbeatIntervalMs, TIMING_BOUNDS.heartbeatIntervalMs),
    heartbeatTimeoutMs: clampTimeout(joined.heartbeatTimeoutMs),
  };
}

/**
 * One join: finds the local address towards the coordinator (the default advertiseHost, which the coordinator
 * checks against where it sees us from), sends the request, and on success has the client carry the session.
 */
export async function joinOnce(
  client: CoordinatorClient,
  request: (advertiseHost: string) => JoinRequest,
  advertiseHost?: string,
): Promise<{ joined: JoinResponse; advertiseHost: string }> {
  const where = client.base.origin;
  const problem = client.trustProblem();
  if (problem) throw new JoinError('untrusted', problem);
  const local = await client.localAddressTowards();
  if (!local.ok) {
    throw new JoinError('unreachable', `cannot reach the coordinator at ${where}: ${local.message}. Check the URL, that the coordinator is running (the app, or \`gpu-share serve\`), and that no firewall blocks the port.`);
  }
  const host = advertiseHost ?? local.address;
  client.useSession(null);
  const reply = await provedJoin(client, () => request(host), where);
  if (reply.kind !== 'ok') throwFailedReply(reply, where, 'the join');
  const parsed = readReply('join', reply.body);
  if (!parsed) {
    throw new JoinError('protocol', `the server at ${where} answered the join with something that is not a GPU Share join response (is it a GPU Share coordinator of the same version?)`);
  }
  if ('status' in parsed) {
    // 202: listed on the coordinator as awaiting approval; nothing else until a person approves this key.
    const approve = `gpu-share workers approve ${parsed.node} --key ${parsed.fingerprint}`;
    throw new JoinError(
      'awaiting',
      `waiting for approval on the coordinator: this machine's key is ${parsed.fingerprint} — approve it there with "${approve}" or the Approve button in the Workers view`,
      parsed.retryAfterMs,
    );
  }
  client.useSession(parsed.sessionSecret);
  return { joined: clampTimings(parsed), advertiseHost: host };
}

/**
 * The challenge, then the join with its proof. The coordinator proves it holds the join token before this worker
 * says anything about itself. A 401 to the join after a proved challenge is not about the token: the challenge
 * was forgotten in between (30 s, or pushed out by a flood of others'), so the pair is tried once more.
 */
async function provedJoin(client: CoordinatorClient, body: () => JoinRequest, where: string): Promise<ApiReply> {
  for (let attempt = 1; ; attempt += 1) {
    const challenge = await challengeCoordinator(client);
    if (challenge.kind === 'unproved') {
      throw new JoinError(challenge.why === 'bad-proof' ? 'untrusted' : 'unauthorized', `${challenge.message}.`);
    }
    if (challenge.kind === 'failed') {
      if (challenge.reply.kind === 'http-error' && challenge.reply.status === 404) {
        throw new JoinError('protocol', `the server at ${where} does not know the join challenge (404): it is not a GPU Share coordinator of this version; update it, or check the URL`);
      }
      throwFailedReply(challenge.reply, where, 'the join challenge');
    }
    const reply = await client.call('join', [], body(), DEFAULT_REQUEST_TIMEOUT_MS, challenge.headers);
    if (attempt < 2 && reply.kind === 'http-error' && reply.status === 401 && /join challenge/.test(reply.message)) continue;
    return reply;
  }
}

/** A failed answer to the join (or its challenge) as the JoinError a person can act on. */
function throwFailedReply(reply: Exclude<ApiReply, { kind: 'ok' }>, where: string, what: string): never {
  switch (reply.kind) {
    case 'network':
      throw new JoinError('unreachable', `cannot reach the coordinator at ${where}: ${reply.message}`);
    case 'untrusted':
      throw new JoinError('untrusted', reply.message);
    case 'protocol':
      throw new JoinError('protocol', `the server at ${where} did not answer ${what} as a GPU Share coordinator does: ${reply.message}`);
    case 'http-error':
      if (reply.status === 401 || reply.status === 403) {
        throw new JoinError(
          'unauthorized',
          `the coordinator at ${where} refused ${what} (${reply.status}: ${reply.message}). Copy the join command again from the app's "Add a worker" panel, or from the output of \`gpu-share serve\`, and pass the token in GPU_SHARE_JOIN_TOKEN.`,
        );
      }
      // Too many joins from this address (join-rate-limit.ts): wait and try again, as for a coordinator not up yet.
      if (reply.status === 429) throw new JoinError('unreachable', `the coordinator at ${where} asks this worker to slow down (429: ${reply.message})`);
      if (reply.status >= 500) throw new JoinError('unreachable', `the coordinator at ${where} failed to answer ${what} (${reply.status}: ${reply.message})`);
      throw new JoinError('refused', `the coordinator at ${where} refused this worker (${reply.status}): ${reply.message}`);
  }
}

export const FIRST_JOIN_BACKOFF = { firstMs: 1000, maxMs: 30_000 } as const;

export interface RetryOptions {
  clock: Clock;
  log: (line: string) => void;
  /** True once the agent is stopping: no more tries. */
  stopped: () => boolean;
  /** Lets stop() cut a wait short: called with a function that ends the current wait. */
  onWait?: (wake: (() => void) | null) => void;
}

/** How often an agent awaiting approval asks again, whatever the coordinator's retryAfterMs says. */
export const AWAITING_RETRY_BOUNDS = { min: 2000, max: 30_000 } as const;

/** When a machine awaiting approval asks again: the coordinator's retryAfterMs, within AWAITING_RETRY_BOUNDS. */
export function awaitingRetryMs(error: JoinError): number {
  return clamp(error.retryAfterMs ?? AWAITING_RETRY_BOUNDS.min, AWAITING_RETRY_BOUNDS);
}

/**
 * Runs `attempt` until it succeeds, retrying only what may pass by itself (no answer, a 5xx) with a backoff of
 * 1 s doubling to 30 s, and a machine awaiting approval every retryAfterMs (clamped to AWAITING_RETRY_BOUNDS).
 * Each distinct failure is logged once, so a long wait does not flood the log.
 */
export async function retryJoin<T>(attempt: () => Promise<T>, opts: RetryOptions): Promise<T> {
  let delayMs: number = FIRST_JOIN_BACKOFF.firstMs;
  let lastMessage = '';
  let awaiting = false;
  for (;;) {
    let waitMs = delayMs;
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof JoinError) || (error.kind !== 'unreachable' && error.kind !== 'awaiting')) throw error;
      // Stopping cuts the try in flight: that is the stop, not a lost coordinator.
      if (opts.stopped()) throw stoppedWhile(awaiting || error.kind === 'awaiting', lastMessage || error.message);
      awaiting = error.kind === 'awaiting';
      if (awaiting) waitMs = awaitingRetryMs(error);
      if (error.message !== lastMessage) {
        opts.log(awaiting ? error.message : `${error.message.replace(/\.$/, '')} — retrying in ${delayMs / 1000} s, and on until it answers (Ctrl-C to stop)`);
        lastMessage = error.message;
      }
    }
    await new Promise<void>((resolve) => {
      const timer = opts.clock.setTimeout(() => wake(), waitMs);
      const wake = () => {
        timer.cancel();
        opts.onWait?.(null);
        resolve();
      };
      opts.onWait?.(wake);
    });
    if (opts.stopped()) throw stoppedWhile(awaiting, lastMessage);
    if (!awaiting) delayMs = Math.min(FIRST_JOIN_BACKOFF.maxMs, delayMs * 2);
  }
}

function stoppedWhile(awaiting: boolean, lastMessage: string): JoinError {
  return awaiting
    ? new JoinError('awaiting', 'stopped while waiting for approval on the coordinator')
    : new JoinError('unreachable', `stopped before the coordinator answered (${lastMessage})`);
}
