/**
 * The attacker of bench/abuse-bounds.ts, in a process of its own so the coordinator's memory is measured
 * alone: a machine that holds the join token (and, for the last two attacks, one worker's own session).
 *   node scripts/run-ts.mjs bench/lib/abuse-client.ts URL JOIN_TOKEN joins N
 *   node scripts/run-ts.mjs bench/lib/abuse-client.ts URL JOIN_TOKEN runid WORKER_ID INCARNATION SESSION
 *   node scripts/run-ts.mjs bench/lib/abuse-client.ts URL JOIN_TOKEN flood WORKER_ID INCARNATION SESSION RUN_ID SECONDS
 * Prints one JSON line with what it did.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { apiPaths, joinResponseSchema, SESSION_HEADER } from '../../src-shared/worker-protocol';
import { fetchPost, memoryIdentity, signedJoin } from './abuse-join';

const [url, token, mode, ...args] = process.argv.slice(2);

async function post(path: string, body: unknown, session?: string): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(session ? { [SESSION_HEADER]: session } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as unknown };
}

async function main(): Promise<Record<string, number>> {
  if (mode === 'joins') {
    const n = Number(args[0]);
    for (let i = 0; i < n; i++) {
      const node = `n${i}-${randomBytes(4).toString('hex')}`;
      // Signed and proved as the agent joins (issue 14); over loopback, so approved by construction.
      const join = { node, agentVersion: 'abuse', machineId: randomBytes(24).toString('base64url'), gpus: [], cpuCores: 1, ramMb: 1, advertiseHost: '127.0.0.1', rdzvPort: 29500, python: null };
      const r = await signedJoin(fetchPost(url!), token!, memoryIdentity(), join);
      const j = joinResponseSchema.parse(JSON.parse(r.text));
      await post(apiPaths.leave(j.workerId), { incarnation: j.incarnation, reason: 'gone' }, j.sessionSecret);
    }
    return { joins: n };
  }
  const [id, incarnation, session] = [Number(args[0]), Number(args[1]), args[2]!];
  if (mode === 'runid') {
    let refused = 0;
    const progress = { runId: 'x'.repeat(900_000), generation: 0, step: 1, loss: null, samplesPerSec: null, resumedFrom: null };
    for (let i = 0; i < 200; i++) if ((await post(apiPaths.heartbeat(id), { incarnation, progress }, session)).status === 400) refused++;
    return { sent: 200, refused };
  }
  if (mode === 'flood') {
    const [runId, seconds] = [args[3]!, Number(args[4])];
    const chunk = ('z'.repeat(1023) + '\n').repeat(900);
    let sent = 0;
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      await post(apiPaths.report(id), { incarnation, reports: [{ type: 'output', runId, generation: 1, data: chunk }] }, session);
      sent += chunk.length;
    }
    return { sentBytes: sent };
  }
  throw new Error(`unknown mode ${mode}`);
}

main().then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (error: unknown) => {
    process.stderr.write(`abuse-client: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
