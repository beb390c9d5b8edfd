/**
 * The fault proxy as a process, to run inside a namespace host (a test process cannot bind inside another
 * network namespace). Bundled by proxy-process.ts. One line per fault, so the test can count them:
 *
 *   node fault-proxy.cjs --listen 10.213.57.2:7431 --target 10.213.57.1:7421 --plan '{"maxDelayMs":800,…}'
 *   fault-proxy listening on 10.213.57.2:7431 -> 10.213.57.1:7421 plan {…}
 *   fault-proxy: stall conn 3 down
 *   fault-proxy: drop conn 4 up
 *   fault-proxy stats {"connections":…}            (on SIGTERM, then it exits)
 *
 * --listen unix:/path makes it a plain relay from a Unix socket (faults off unless a plan is given): the
 * test reaches a host's own 127.0.0.1 through it without any traffic on the machine's interfaces.
 */
import { FaultProxy, NO_FAULTS, type Endpoint, type FaultEvent, type FaultPlan } from './fault-proxy';

function endpoint(raw: string | undefined, flag: string): Endpoint {
  if (!raw) throw new Error(`${flag} is required`);
  if (raw.startsWith('unix:')) return { path: raw.slice('unix:'.length) };
  const m = /^(.+):(\d+)$/.exec(raw);
  if (!m) throw new Error(`${flag} "${raw}" must be HOST:PORT or unix:PATH`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

async function main(): Promise<void> {
  const listen = endpoint(flag('--listen'), '--listen');
  const target = endpoint(flag('--target'), '--target');
  const planText = flag('--plan');
  const plan: FaultPlan = { ...NO_FAULTS, ...(planText ? (JSON.parse(planText) as Partial<FaultPlan>) : {}) };
  const proxy = await FaultProxy.listen(listen, target, plan);
  proxy.on('fault', (f: FaultEvent) => process.stdout.write(`fault-proxy: ${f.kind} conn ${f.conn} ${f.direction}\n`));
  const targetText = 'path' in target ? `unix:${target.path}` : `${target.host}:${target.port}`;
  process.stdout.write(`fault-proxy listening on ${proxy.address} -> ${targetText} plan ${JSON.stringify(plan)}\n`);
  const stop = () => {
    process.stdout.write(`fault-proxy stats ${JSON.stringify(proxy.stats)}\n`);
    void proxy.close().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 1000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`fault-proxy: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
