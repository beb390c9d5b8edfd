/**
 * Who may speak for a worker. Holding the join token only lets a machine join; after that every request must
 * carry the per-session secret handed out at join, a node name stays with the machine that first used it, a
 * worker may only advertise the address it is seen from, and only the coordinator's own machine may say it
 * is the app's local worker. Without these, one machine holding the join token could make others leave, fail
 * runs, keep dead workers "active", or host the c10d store every other member unpickles.
 */
import { createHash, randomBytes } from 'node:crypto';
import { isLoopbackHost } from '../../../../src-shared/cluster/loopback';
import { tokensEqual } from '../../../platform/tokens';
import { normalizeAddress } from '../../../platform/runs/local-interface';
import { ApiProblem } from '../common';
import { lookalikeNote, nodeNameKey } from '../../../../src-shared/nodes/node-name-key';

/** Where a request came from, as the coordinator's socket saw it. */
export interface ConnectionFacts {
  /** The peer's address (IPv4-mapped IPv6 unwrapped); null when the socket had none. */
  seenFrom: string | null;
  /** The coordinator's own address on this connection: how that peer reaches the coordinator's machine. */
  coordinatorAddr: string | null;
  /** The peer is this machine (loopback, or the same address on both ends). */
  sameMachine: boolean;
}

/** An address in one spelling (IPv4-mapped unwrapped, IPv6 canonical); a host name as given, lower-cased. */
export function unwrapAddress(address: string | null | undefined): string | null {
  if (!address) return null;
  return normalizeAddress(address)?.address ?? address.trim().toLowerCase();
}

export function isLoopbackAddress(address: string | null): boolean {
  return address !== null && isLoopbackHost(address);
}

export function connectionFacts(remoteAddress: string | null | undefined, localAddress: string | null | undefined): ConnectionFacts {
  const seenFrom = unwrapAddress(remoteAddress);
  const coordinatorAddr = unwrapAddress(localAddress);
  const sameMachine = isLoopbackAddress(seenFrom) || (seenFrom !== null && seenFrom === coordinatorAddr);
  return { seenFrom, coordinatorAddr, sameMachine };
}

/** Where each worker's current session hash is kept: on its membership record in the coordinator, a map in tests. */
export interface SessionSlots {
  get(workerId: number): string | null | undefined;
  set(workerId: number, sessionHash: string | null): void;
}

/** Sessions kept on the machines' membership records (member-record.ts): forgetting a machine forgets its session. */
export function recordSessions(find: (workerId: number) => { sessionHash: string | null } | undefined): SessionSlots {
  return {
    get: (id) => find(id)?.sessionHash,
    set: (id, sessionHash) => {
      const rec = find(id);
      if (rec) rec.sessionHash = sessionHash;
    },
  };
}

function mapSlots(): SessionSlots {
  const map = new Map<number, string | null>();
  return { get: (id) => map.get(id), set: (id, h) => void map.set(id, h) };
}

export interface GateOptions {
  /** Where sessions live (default: a map of the gate's own). */
  sessions?: SessionSlots;
  /** Accept an advertiseHost other than the address a worker is seen from (NAT, several interfaces). */
  trustAdvertisedHosts?: boolean;
  /** Name bindings kept; the oldest binding of a name not in use is forgotten past this (default 10,000). */
  maxNames?: number;
  /** Whether a worker record still uses the name (its binding is never forgotten then). */
  nameInUse?: (node: string) => boolean;
}

export interface AdmitRequest {
  node: string;
  machineId: string;
  advertiseHost: string;
  local: boolean;
}

interface NameBinding {
  /** The spelling the machine sent (the map's key is nodeNameKey of it). */
  node: string;
  machineHash: string;
  firstFrom: string | null;
}

function hash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url');
}

export class WorkerGate {
  private readonly names = new Map<string, NameBinding>();
  private readonly sessions: SessionSlots;
  private readonly trustAdvertised: boolean;
  private readonly maxNames: number;
  private readonly nameInUse: (node: string) => boolean;

  constructor(opts: GateOptions = {}) {
    this.sessions = opts.sessions ?? mapSlots();
    this.trustAdvertised = opts.trustAdvertisedHosts ?? false;
    this.maxNames = opts.maxNames ?? 10_000;
    this.nameInUse = opts.nameInUse ?? (() => false);
  }

  /** Refuses a join that claims what its connection does not show; binds a new name to the joining machine. */
  admit(req: AdmitRequest, conn: ConnectionFacts): void {
    if (req.local && !conn.sameMachine) {
      throw new ApiProblem(403, `"local": true is only accepted from the coordinator's own machine; ${req.node} connects from ${conn.seenFrom ?? 'an unknown address'}`);
    }
    const advertised = unwrapAddress(req.advertiseHost);
    if (!this.trustAdvertised && advertised !== conn.seenFrom) {
      throw new ApiProblem(
        403,
        `${req.node} advertises ${req.advertiseHost} but connects from ${conn.seenFrom ?? 'an unknown address'}: other workers would be sent ` +
          'to an address this coordinator cannot vouch for. Leave --advertise-host out, or start the coordinator with --trust-advertised-hosts ' +
          '(needed behind NAT).',
      );
    }
    const machineHash = hash(req.machineId);
    const bound = this.names.get(nodeNameKey(req.node));
    if (bound && !tokensEqual(bound.machineHash, machineHash)) {
      const which = bound.node === req.node ? `the node name "${req.node}"` : `the node name ${lookalikeNote(req.node, bound.node)}, which`;
      throw new ApiProblem(
        409,
        `${which} belongs to another machine (it first joined from ${bound.firstFrom ?? 'an unknown address'}); ` +
          'give this machine another name with gpu-share worker --name NAME',
      );
    }
    if (!bound) {
      this.names.set(nodeNameKey(req.node), { node: req.node, machineHash, firstFrom: conn.seenFrom });
      this.trimNames();
    }
  }

  /** A fresh secret for a worker's new session; the previous one stops working. */
  openSession(workerId: number): string {
    const secret = randomBytes(32).toString('base64url');
    this.sessions.set(workerId, hash(secret));
    return secret;
  }

  /** Throws 401 unless `secret` is the worker's current session secret. */
  checkSession(workerId: number, secret: string | null, node: string): void {
    const expected = this.sessions.get(workerId);
    if (secret && expected && tokensEqual(expected, hash(secret))) return;
    throw new ApiProblem(
      401,
      secret
        ? `wrong session for worker ${workerId} (${node}): this request is not from its current session; join again`
        : `missing session: worker requests carry the session secret from the join answer in the x-gpu-share-session header`,
    );
  }

  /** The hash of the machine id bound to a node name (what the state database keeps; never the id itself). */
  machineHashOf(node: string): string | null {
    return this.names.get(nodeNameKey(node))?.machineHash ?? null;
  }

  /** A binding kept from before a restart: the name still belongs to that machine. */
  restoreBinding(node: string, machineHash: string, firstFrom: string | null): void {
    this.names.set(nodeNameKey(node), { node, machineHash, firstFrom });
  }

  closeSession(workerId: number): void {
    this.sessions.set(workerId, null);
  }

  private trimNames(): void {
    if (this.names.size <= this.maxNames) return;
    for (const [name, binding] of this.names) {
      if (this.nameInUse(binding.node)) continue;
      this.names.delete(name);
      return;
    }
  }
}
