/**
 * A worker that only joins and heartbeats, through the real HTTP protocol, as its own OS process: for
 * measuring failure detection many times without paying a real agent's hardware detection at each start.
 * Usage (bundled, see bundleEntry): node light-worker.cjs URL NAME   (join token in GPU_SHARE_JOIN_TOKEN)
 * Prints "joined ID" once the coordinator accepted it, then heartbeats at the interval it was given.
 */
import { randomBytes } from 'node:crypto';
import { apiPaths, heartbeatResponseSchema, joinResponseSchema, SESSION_HEADER, type JoinRequest } from '../../src-shared/worker-protocol';

const [url, name] = process.argv.slice(2);
const token = process.env.GPU_SHARE_JOIN_TOKEN ?? '';
let session = '';

async function post(path: string, body: unknown): Promise<unknown> {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(session ? { [SESSION_HEADER]: session } : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  const json: unknown = await res.json();
  if (!res.ok) throw new Error(`${path} → ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

async function main(): Promise<void> {
  if (!url || !name) throw new Error('usage: light-worker URL NAME');
  const join: JoinRequest = {
    node: name,
    agentVersion: 'bench-light',
    machineId: randomBytes(24).toString('base64url'),
    gpus: [],
    cpuCores: 1,
    ramMb: 1024,
    advertiseHost: '127.0.0.1',
    rdzvPort: 29400,
    python: null,
  };
  const joined = joinResponseSchema.parse(await post(apiPaths.join, join));
  session = joined.sessionSecret;
  process.stdout.write(`joined ${joined.workerId}\n`);
  const beat = async () => {
    try {
      heartbeatResponseSchema.parse(await post(apiPaths.heartbeat(joined.workerId), { incarnation: joined.incarnation, progress: null }));
    } catch (error) {
      process.stderr.write(`heartbeat failed: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  };
  await beat();
  setInterval(() => void beat(), joined.heartbeatIntervalMs);
}

main().catch((error: unknown) => {
  process.stderr.write(`light-worker: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
