/**
 * A stranger that holds the join token and floods signed joins over HTTPS (issue 26, item 6), bundled to a .cjs
 * and run inside a namespace host by join-flood.ts. It speaks as the agent does: TLS pinned to the coordinator's
 * certificate by the agent's own connector (platform/net/pinned-connection.ts), the join challenge, the proof
 * bound to that fingerprint, an Ed25519 signature — with a fresh key under a fresh name for every join, from one
 * of the host's many addresses per lane (localAddress), ignoring every Retry-After.
 *
 *   node join-flood.cjs URL CERT_SHA256 ADDRESSES(a,b,…) SECONDS   (the join token in GPU_SHARE_JOIN_TOKEN)
 *
 * Prints "join-flood: started" once every lane runs, then one JSON line: how many joins were sent, how long it
 * took, and how each was answered ({"sent":…,"seconds":…,"http202":…,"http429":…}).
 */
import { randomBytes } from 'node:crypto';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { pinnedConnector } from '../../../src-main/platform/net/pinned-connection';
import { memoryIdentity, signedJoin, type Post } from '../../../bench/lib/abuse-join';

const REQUEST_TIMEOUT_MS = 10_000;

/** A POST over one kept-alive, pinned TLS connection from `localAddress`. */
function poster(url: URL, certSha256: string, localAddress: string): { post: Post; agent: https.Agent } {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, localAddress });
  agent.createConnection = pinnedConnector(certSha256) as https.Agent['createConnection'];
  const post: Post = (path, body, headers) =>
    new Promise((resolve, reject) => {
      const req = https.request(new URL(path, url), { method: 'POST', agent, timeout: REQUEST_TIMEOUT_MS, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, retryAfterS: Number(res.headers['retry-after'] ?? 0) || 0 }));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(body);
    });
  return { post, agent };
}

async function main(): Promise<Record<string, number>> {
  const [url = '', cert = '', list = '', seconds = ''] = process.argv.slice(2);
  const token = process.env.GPU_SHARE_JOIN_TOKEN ?? '';
  const addresses = list.split(',').filter(Boolean);
  if (!url || !cert || !token || addresses.length === 0 || !(Number(seconds) > 0)) {
    throw new Error('usage: join-flood URL CERT_SHA256 ADDRESSES SECONDS, with the token in GPU_SHARE_JOIN_TOKEN');
  }
  const base = new URL(url);
  const tag = randomBytes(3).toString('hex');
  const byStatus: Record<string, number> = {};
  const end = performance.now() + Number(seconds) * 1000;
  const t0 = performance.now();
  let next = 0;
  const lanes = addresses.map((from) => ({ from, ...poster(base, cert, from) }));
  const run = async (lane: (typeof lanes)[number]) => {
    while (performance.now() < end) {
      const i = next++;
      const join = { node: `flood-${tag}-${i}`, agentVersion: 'flood', machineId: randomBytes(24).toString('base64url'), gpus: [], cpuCores: 1, ramMb: 1, advertiseHost: lane.from, rdzvPort: 29500, python: null };
      const status = await signedJoin(lane.post, token, memoryIdentity(), join, 0, cert).then(
        (r) => r.status,
        () => 0,
      );
      byStatus[`http${status}`] = (byStatus[`http${status}`] ?? 0) + 1;
      // A refused or failed connection is tried again at once; only a dead lane would spin, so yield a little.
      if (status === 0) await new Promise((r) => setTimeout(r, 50));
    }
  };
  const running = Promise.all(lanes.map(run));
  process.stdout.write('join-flood: started\n');
  await running;
  for (const l of lanes) l.agent.destroy();
  return { sent: next, seconds: (performance.now() - t0) / 1000, ...byStatus };
}

main().then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`join-flood: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
