/**
 * 1,000 simulated workers heartbeating at 1 Hz against one coordinator on loopback: heartbeat latency
 * (p50/p99, measured by the clients) and the coordinator process's CPU over the window (% of one core).
 * Targets: p99 < 20 ms, CPU < 25 %. The workers live in a child process so their own CPU is not counted.
 *
 *   node scripts/run-ts.mjs bench/heartbeat-1000.ts [--workers 1000] [--seconds 20]
 *
 * A run over all of them is live, so heartbeats carry progress into the run's bookkeeping and the app's
 * listener gets coalesced snapshots, as in the desktop app.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startCoordinatorHttp } from '../src-main/core/api/coordinator-http';
import { generateToken } from '../src-main/platform/tokens';
import { CoordinatorService } from '../src-main/core/coordinator/service/coordinator-service';
import { systemClock } from '../src-main/platform/ports';
import { apiPaths, JOIN_CHALLENGE_HEADER, JOIN_PROOF_HEADER, runSpecSchema, SESSION_HEADER, type HeartbeatResponse, type JoinResponse } from '../src-shared/worker-protocol';
import { joinKey, joinNonce, joinTranscript, tokenId, transcriptCert, workerProof } from '../src-main/platform/join-proof';
import { intFlag } from './lib/flags';
import { summarize } from './lib/stats';


// ------------------------------------------------------------------------------------------------------------
// Child: the simulated workers.

async function child(url: string, token: string, count: number, seconds: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const target = new URL(url);
  // Every worker request after the join carries that worker's session secret.
  const post = <T>(path: string, body: unknown, session?: string, extra: Record<string, string> = {}): Promise<{ status: number; json: T }> =>
    new Promise((resolve, reject) => {
      const text = JSON.stringify(body);
      const req = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
            ...(session ? { [SESSION_HEADER]: session } : {}),
            ...extra,
          },
        },
        (res) => {
          let data = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (data += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, json: (data ? JSON.parse(data) : null) as T }));
        },
      );
      req.on('error', reject);
      req.end(text);
    });

  // The join proves the token by a challenge (docs/api.md, "Joining"); the token itself is never sent.
  const proof = async (): Promise<Record<string, string>> => {
    const workerNonce = joinNonce();
    const r = await post<{ challengeId: string; coordinatorNonce: string; proof: string }>(apiPaths.joinChallenge, { workerNonce, tokenId: tokenId(token) });
    if (r.status !== 200) throw new Error(`join challenge failed with ${r.status}: ${JSON.stringify(r.json)}`);
    const transcript = joinTranscript({ workerNonce, coordinatorNonce: r.json.coordinatorNonce, certSha256: transcriptCert(null), nodePublicKey: '' });
    return { [JOIN_CHALLENGE_HEADER]: r.json.challengeId, [JOIN_PROOF_HEADER]: workerProof(joinKey(token), transcript) };
  };

  // Join everyone, 50 at a time.
  const ids: JoinResponse[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, async (_, k) =>
        post<JoinResponse>(apiPaths.join, {
          node: `sim-${i + k}`,
          agentVersion: 'bench',
          machineId: randomBytes(24).toString('base64url'),
          gpus: [],
          cpuCores: 4,
          ramMb: 8192,
          advertiseHost: '127.0.0.1',
          rdzvPort: 20000 + ((i + k) % 40000),
          python: { path: '/usr/bin/python3', torchVersion: '1.13.1' },
        }, undefined, await proof()),
      ),
    );
    for (const r of batch) {
      if (r.status !== 200) throw new Error(`join failed with ${r.status}: ${JSON.stringify(r.json)}`);
      ids.push(r.json);
    }
  }

  const warmupMs = 5000;
  const t0 = performance.now();
  const measureFrom = t0 + warmupMs;
  const measureTo = measureFrom + seconds * 1000;
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;

  await new Promise<void>((done) => {
    let finished = 0;
    ids.forEach((w, i) => {
      let step = 0;
      let plan: { runId: string; generation: number } | null = null;
      const phase = (i / ids.length) * 1000;
      let beat = 0;
      const next = () => {
        const due = t0 + phase + beat * 1000;
        beat++;
        if (due > measureTo) {
          if (++finished === ids.length) done();
          return;
        }
        setTimeout(once, Math.max(0, due - performance.now()));
      };
      const once = () => {
        if (!measuring && performance.now() >= measureFrom) {
          measuring = true;
          process.stdout.write('MEASURING\n');
        }
        const progress = plan ? { ...plan, step: step++, loss: 1 / (step + 1), samplesPerSec: 100, resumedFrom: null } : null;
        const start = performance.now();
        post<HeartbeatResponse>(apiPaths.heartbeat(w.workerId), { incarnation: w.incarnation, progress }, w.sessionSecret)
          .then((r) => {
            const ms = performance.now() - start;
            if (r.status !== 200) errors++;
            else {
              for (const ins of r.json.instructions) if (ins.kind === 'start') plan = { runId: ins.plan.runId, generation: ins.plan.generation };
              if (start >= measureFrom) latencies.push(ms);
            }
          })
          .catch(() => errors++)
          .finally(next);
      };
      next();
    });
  });
  agent.destroy();
  process.stdout.write(`RESULT ${JSON.stringify({ latencies, errors })}\n`);
}

// ------------------------------------------------------------------------------------------------------------
// Parent: the coordinator.

async function parent(): Promise<void> {
  const count = intFlag('workers', 1000, 1, 100_000);
  const seconds = intFlag('seconds', 20, 1, 3600);
  const joinToken = generateToken();
  const operatorToken = generateToken();
  const service = new CoordinatorService({ clock: systemClock, joinToken, operatorToken, maxWorkers: count + 10 });
  let changes = 0;
  service.subscribe(() => changes++);
  service.startRun(runSpecSchema.parse({ name: 'bench', command: ['bench.py'], samples: 1_000_000, minWorkers: 1, maxWorkers: count }));
  service.start();
  const api = await startCoordinatorHttp(service, { host: '127.0.0.1', port: 0, joinToken, operatorToken });

  const self = fileURLToPath(import.meta.url);
  const proc = spawn(process.execPath, [self, '--child', api.url, joinToken, String(count), String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  let cpuStart: NodeJS.CpuUsage | null = null;
  let wallStart = 0;
  let cpuPct = NaN;
  let result: { latencies: number[]; errors: number } | null = null;
  const lines = createInterface({ input: proc.stdout! });
  lines.on('line', (line) => {
    if (line === 'MEASURING') {
      loopDelay.enable();
      cpuStart = process.cpuUsage();
      wallStart = performance.now();
    } else if (line.startsWith('RESULT ')) {
      if (cpuStart) {
        const d = process.cpuUsage(cpuStart);
        cpuPct = ((d.user + d.system) / 1000 / (performance.now() - wallStart)) * 100;
      }
      loopDelay.disable();
      result = JSON.parse(line.slice(7));
    }
  });
  const code: number = await new Promise((resolve) => proc.on('exit', (c) => resolve(c ?? 1)));
  service.stop();
  await api.close();
  if (code !== 0 || !result) throw new Error(`the simulated workers exited with code ${code}`);
  const { latencies, errors } = result as { latencies: number[]; errors: number };
  const latency = summarize(latencies);
  const run = service.runs()[0]!;
  const fmt = (n: number) => n.toFixed(2);
  console.log(`heartbeat-1000: ${count} workers x 1 Hz for ${seconds} s on 127.0.0.1 (node ${process.version})`);
  console.log(`  machine: ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (the workers' child process shares these cores)`);
  console.log(`  heartbeats measured: ${latency.n}   errors: ${errors}`);
  console.log(`  latency ms: p50 ${fmt(latency.p50)}   p99 ${fmt(latency.p99)}   max ${fmt(latency.max)}   (target p99 < 20)`);
  console.log(`  coordinator CPU: ${cpuPct.toFixed(1)} % of one core   (target < 25)`);
  console.log(
    `  coordinator event-loop delay ms: p50 ${fmt(loopDelay.percentile(50) / 1e6)}   p99 ${fmt(loopDelay.percentile(99) / 1e6)}   max ${fmt(loopDelay.max / 1e6)}`,
  );
  console.log(`  run: generation ${run.generation} over ${run.workerIds.length} workers, step ${run.progress?.step ?? '-'}; ${changes} changes sent to the listener`);
}

if (process.argv.includes('--child')) {
  const i = process.argv.indexOf('--child');
  const [url, token, count, seconds] = process.argv.slice(i + 1);
  await child(url!, token!, Number(count), Number(seconds));
} else {
  await parent();
}
