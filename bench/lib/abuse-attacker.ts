/**
 * The attacker of the issue-14 abuse benches (bench/abuse-nonce-flood.ts, abuse-join-flood.ts), in a process
 * of its own so the coordinator's memory is measured alone: a machine that holds the join token and signs
 * with keys of its own, as the agent does (join challenge, proof, Ed25519 signature), over raw HTTP so it can
 * pick its source address among 127.0.0.0/8.
 *   node scripts/run-ts.mjs bench/lib/abuse-attacker.ts nonce-flood URL JOIN_TOKEN COUNT MAX_S
 *     COUNT joins by one fresh key under one name from 127.0.0.2, each dated +59 s (just inside the window)
 *   node scripts/run-ts.mjs bench/lib/abuse-attacker.ts join-flood URL JOIN_TOKEN COUNT ADDRESSES MAX_S LANES
 *     COUNT joins, each by a fresh key under a distinct name, LANES in flight, lane i from source address
 *     127.0.1.(1 + i % ADDRESSES) (ADDRESSES 1: 127.0.0.1). A 429 is waited out as its retry-after says, unless
 *     a 5th argument says no-wait.
 * Stops at COUNT or after MAX_S seconds; prints one JSON line: how many were sent and how each was answered.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { NodeIdentity } from '../../src-main/agent/node-identity';
import { memoryIdentity, signedJoin as provedJoin, type Post, type Reply } from './abuse-join';

const [mode = '', url = '', token = '', ...args] = process.argv.slice(2);
const MAX_LANES = 16;
const agents = new Map<string, http.Agent>();

function post(path: string, body: string, headers: Record<string, string>, localAddress: string): Promise<Reply> {
  let agent = agents.get(localAddress);
  if (!agent) agents.set(localAddress, (agent = new http.Agent({ keepAlive: true, maxSockets: MAX_LANES, localAddress })));
  const target = new URL(path, url);
  return new Promise((resolve, reject) => {
    const req = http.request(target, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, retryAfterS: Number(res.headers['retry-after'] ?? 0) || 0 }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One signed join from `from` (challenge, proof, signature); its status, after waiting out a 429. */
async function signedJoin(who: NodeIdentity, node: string, from: string, timeSkewMs: number, machineId = randomBytes(24).toString('base64url'), wait = true): Promise<number> {
  const send: Post = (path, body, headers) => post(path, body, headers, from);
  const join = { node, agentVersion: 'abuse', machineId, gpus: [], cpuCores: 1, ramMb: 1, advertiseHost: from, rdzvPort: 29500, python: null };
  const reply = await provedJoin(send, token, who, join, timeSkewMs);
  return wait ? waitIfLimited(reply) : reply.status;
}

/** A 429's status, after waiting as long as its retry-after asks: the most joins a rate-limited attacker gets through. */
async function waitIfLimited(reply: Reply): Promise<number> {
  if (reply.status === 429) await new Promise((r) => setTimeout(r, Math.max(1, reply.retryAfterS) * 1000));
  return reply.status;
}

/** Runs `count` attempts, `lanes` at a time, for at most `maxS` seconds; counts the answers by status. */
async function flood(count: number, maxS: number, lanes: number, attempt: (i: number, lane: number) => Promise<number>): Promise<Record<string, number>> {
  const byStatus: Record<string, number> = {};
  const t0 = performance.now();
  const end = t0 + maxS * 1000;
  let next = 0;
  const run = async (lane: number) => {
    while (next < count && performance.now() < end) {
      const i = next++;
      const status = await attempt(i, lane).catch(() => 0);
      byStatus[`http${status}`] = (byStatus[`http${status}`] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: lanes }, (_, lane) => run(lane)));
  return { sent: next, seconds: (performance.now() - t0) / 1000, ...byStatus };
}

async function main(): Promise<Record<string, number>> {
  if (mode === 'nonce-flood') {
    const [count, maxS] = [Number(args[0]), Number(args[1])];
    const stranger = memoryIdentity();
    const machineId = randomBytes(24).toString('base64url');
    return flood(count, maxS, MAX_LANES, () => signedJoin(stranger, 'stranger', '127.0.0.2', 59_000, machineId));
  }
  if (mode === 'join-flood') {
    const [count, addresses, maxS] = [Number(args[0]), Number(args[1]), Number(args[2])];
    if (addresses > 250) throw new Error('at most 250 source addresses (127.0.1.1–250)');
    const tag = randomBytes(3).toString('hex');
    const lanes = Math.max(1, Number(args[3] ?? MAX_LANES));
    const from = (lane: number) => (addresses <= 1 ? '127.0.0.1' : `127.0.1.${1 + (lane % addresses)}`);
    const wait = args[4] !== 'no-wait'; // no-wait: a 429's retry-after is ignored, as a hostile client would
    return flood(count, maxS, lanes, (i, lane) => signedJoin(memoryIdentity(), `flood-${tag}-${i}`, from(lane), 0, undefined, wait));
  }
  throw new Error(`unknown mode ${mode}`);
}

main().then(
  (result) => {
    for (const a of agents.values()) a.destroy();
    process.stdout.write(`${JSON.stringify(result)}\n`);
  },
  (error: unknown) => {
    process.stderr.write(`abuse-attacker: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
