/**
 * The presence WebSocket each agent holds open (`GET /v1/workers/{id}/presence`). Heartbeats still carry
 * instructions; this socket only answers "is the agent's process alive?" faster than a timeout can:
 * - a close frame with BYE is the agent's deathrattle (a clean exit or leave): a leave, at once;
 * - an orderly TCP close (FIN) with no close frame comes from the agent's kernel closing the socket of a
 *   process that died: failed at once (after a short grace for a reconnect);
 * - a reset or silence is what a network fault looks like: left to the heartbeat timeout, so a poor link
 *   raises no false alarm;
 * - the agent's pings (every half timeout) count as proof of life, so a stall or reset on the heartbeats'
 *   own connection does not fail a machine that is alive (membership.ts bounds how long pings alone suffice).
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { PRESENCE_CLOSE, PRESENCE_POKE } from '../../../src-shared/worker-protocol';
import { isApiProblem } from '../coordinator/common';
import type { NodeKeys } from '../coordinator/membership';
import { sha256Hex, signedPartsOf } from './request-signature';
import { answerAndDestroy } from '../../platform/net/connection-guard';

export interface PresenceService {
  presenceOpened(workerId: number, secret: string | null): { incarnation: number; node: string };
  /** A ping on the connection: the agent is alive, whatever its heartbeats' path is doing. */
  presenceAlive(workerId: number, incarnation: number): void;
  presenceBye(workerId: number, incarnation: number, reason: string): void;
  presenceLost(workerId: number, incarnation: number): void;
  /** Node identity: the upgrade of a node with a pinned key must be signed by it. */
  readonly nodeKeys: Pick<NodeKeys, 'checkRequest'>;
  nodeOf(workerId: number): string;
}

export interface PresenceOptions {
  sessionOf(req: http.IncomingMessage): string | null;
  /** How long an abruptly closed agent has to reconnect before it is failed (default 300 ms). */
  abruptCloseGraceMs?: number;
}

interface Entry {
  ws: WebSocket;
  incarnation: number;
  /** The peer closed its side in order (FIN). */
  orderlyEnd: boolean;
  /** The connection was reset or errored: a network fault, not a death. */
  faulted: boolean;
}

const PATH = /^\/v1\/workers\/(\d{1,9})\/presence$/;

function refuse(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ error: message });
  const reason = http.STATUS_CODES[status] ?? 'Error';
  // Destroyed once written, not half-closed: an upgrade's socket has left the HTTP server and its deadlines.
  answerAndDestroy(socket, `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

export interface PresenceServer {
  /** Number of agents holding a presence connection now. */
  connected(): number;
  /** Asks a worker's agent to heartbeat now (instructions are waiting); pokes within one turn go out once. */
  poke(workerId: number): void;
  close(): void;
}

export function attachPresence(server: http.Server, service: PresenceService, opts: PresenceOptions): PresenceServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  const current = new Map<number, Entry>();
  const graceMs = opts.abruptCloseGraceMs ?? 300;
  let closing = false;

  const track = (workerId: number, incarnation: number, ws: WebSocket, socket: Duplex): void => {
    const entry: Entry = { ws, incarnation, orderlyEnd: false, faulted: false };
    const previous = current.get(workerId);
    current.set(workerId, entry);
    previous?.ws.close(PRESENCE_CLOSE.REPLACED, 'replaced by a newer presence connection');
    socket.on('end', () => (entry.orderlyEnd = true));
    socket.on('error', () => (entry.faulted = true));
    ws.on('error', () => (entry.faulted = true));
    ws.on('message', () => undefined); // agents send nothing that matters
    // ws answers the ping itself; a ping from the current connection also counts as proof of life.
    ws.on('ping', () => {
      if (!closing && current.get(workerId) === entry) service.presenceAlive(workerId, incarnation);
    });
    ws.on('close', (code, reasonBuffer) => {
      if (current.get(workerId) === entry) current.delete(workerId);
      if (closing) return;
      if (code === PRESENCE_CLOSE.BYE) {
        service.presenceBye(workerId, incarnation, reasonBuffer.toString('utf8'));
        return;
      }
      if (code !== 1006 || !entry.orderlyEnd || entry.faulted) return;
      setTimeout(() => {
        const now = current.get(workerId);
        if (closing || (now && now.incarnation === incarnation)) return; // it reconnected: alive after all
        service.presenceLost(workerId, incarnation);
      }, graceMs).unref();
    });
  };

  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => undefined);
    let pathname = '';
    try {
      pathname = new URL(req.url ?? '/', 'http://coordinator').pathname;
    } catch {
      // falls through to 404
    }
    const m = PATH.exec(pathname);
    if (!m) return refuse(socket, 404, `no WebSocket endpoint ${pathname.slice(0, 200)}`);
    // No join token here (it never crosses the wire): the session secret and the node's signature authenticate the upgrade.
    const workerId = Number(m[1]);
    let opened: { incarnation: number };
    try {
      opened = service.presenceOpened(workerId, opts.sessionOf(req));
      // Node identity: a pinned node's upgrade must be signed like its other requests (node-keys.ts).
      service.nodeKeys.checkRequest(service.nodeOf(workerId), { method: 'GET', target: req.url ?? '/', bodySha256Hex: sha256Hex(Buffer.alloc(0)), signed: signedPartsOf(req) });
    } catch (error) {
      return refuse(socket, isApiProblem(error) ? error.status : 400, error instanceof Error ? error.message : String(error));
    }
    wss.handleUpgrade(req, socket, head, (ws) => track(workerId, opened.incarnation, ws, socket));
  };
  server.on('upgrade', onUpgrade);

  const toPoke = new Set<number>();
  const sendPokes = (): void => {
    for (const id of toPoke) {
      const entry = current.get(id);
      if (entry && entry.ws.readyState === entry.ws.OPEN) entry.ws.send(PRESENCE_POKE);
    }
    toPoke.clear();
  };

  return {
    connected: () => current.size,
    poke: (workerId) => {
      if (closing || !current.has(workerId)) return;
      if (toPoke.size === 0) setImmediate(sendPokes);
      toPoke.add(workerId);
    },
    close: () => {
      closing = true;
      server.off('upgrade', onUpgrade);
      for (const entry of current.values()) entry.ws.close(1001, 'coordinator stopping');
      current.clear();
      wss.close();
    },
  };
}
