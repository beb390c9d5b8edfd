/**
 * Slow links on purpose, for the slow-link cases and bench/slow-link.ts (issue 16): a token-bucket filter
 * (`tc qdisc replace … root tbf`) on both ends of a host's cable to the switch — tbf shapes only what leaves a
 * device, so the host's end caps its upload and the switch's end its download. netem is not in this kernel, so
 * there is no added delay: the round trip grows only by what queues in the bucket.
 *
 * Burst and queue are chosen so that a short transfer cannot fake speed: the bucket holds about 1 ms of the rate
 * (never less than two full frames, never more than 128 kB), so a 1 MB probe sees the rate within a few percent;
 * the queue holds about 20 ms, like a home router's, so TCP fills the link without minutes of bufferbloat.
 *
 *   shapeLink(cluster, 'b', 20);      // host b's cable at 20 Mbit/s both ways
 *   await measureMbit(cluster, 'a', 'b', 4_000_000);   // ≈ 19.x
 *   unshapeLink(cluster, 'b');        // back to the bare veth (tens of Gbit/s)
 */
import type { Cluster, Host } from './hosts';
import { HOST_DEV } from './hosts';
import { sh, shQuiet } from './sh';

/** What one cable end gets. */
export interface LinkShape {
  rateMbit: number;
  /** The bucket: bytes that may leave at line speed after a pause. */
  burstBytes: number;
  /** How long a packet may wait in the queue before it is dropped. */
  latencyMs: number;
}

/** Rates tc takes here: 1 kbit/s to 100 Gbit/s; anything else is a mistake in the caller. */
export const MIN_RATE_MBIT = 0.001;
export const MAX_RATE_MBIT = 100_000;
const FRAME = 1514;

/** The tbf parameters for `rateMbit` (see the file comment for why these). */
export function tbfFor(rateMbit: number): LinkShape {
  if (!Number.isFinite(rateMbit) || rateMbit < MIN_RATE_MBIT || rateMbit > MAX_RATE_MBIT) {
    throw new Error(`link rate ${rateMbit} Mbit/s is out of range: give ${MIN_RATE_MBIT}–${MAX_RATE_MBIT} Mbit/s`);
  }
  const bytesPerMs = (rateMbit * 1e6) / 8 / 1000;
  const burstBytes = Math.round(Math.min(128 * 1024, Math.max(2 * FRAME, bytesPerMs)));
  return { rateMbit, burstBytes, latencyMs: 20 };
}

function tbfArgs(s: LinkShape): string[] {
  return ['root', 'tbf', 'rate', `${Math.round(s.rateMbit * 1000)}kbit`, 'burst', String(s.burstBytes), 'latency', `${s.latencyMs}ms`];
}

/** The two cable ends of `host`: [namespace, device] pairs. */
function ends(cluster: Cluster, host: Host): [string, string][] {
  return [
    [host.ns, HOST_DEV],
    [cluster.bridgeNs, host.switchPort],
  ];
}

/** Caps host `name`'s cable to `rateMbit` both ways (replaces any earlier shape). Returns what was set. */
export function shapeLink(cluster: Cluster, name: string, rateMbit: number): LinkShape {
  const shape = tbfFor(rateMbit);
  for (const [ns, dev] of ends(cluster, cluster.host(name))) sh('tc', ['-n', ns, 'qdisc', 'replace', 'dev', dev, ...tbfArgs(shape)]);
  return shape;
}

/** Takes the cap off host `name`'s cable (both ends); a cable with no cap is left as it is. */
export function unshapeLink(cluster: Cluster, name: string): void {
  for (const [ns, dev] of ends(cluster, cluster.host(name))) {
    const r = shQuiet('tc', ['-n', ns, 'qdisc', 'del', 'dev', dev, 'root']);
    // "No such file or directory" / "Cannot delete qdisc with handle of zero": nothing was set, which is fine.
    if (!r.ok && !/No such file|handle of zero|Invalid handle/i.test(r.out)) throw new Error(`removing the cap on ${name}'s cable: ${r.out}`);
  }
}

/** The tbf rate in Mbit/s on each end of host `name`'s cable (null where none), read back from tc. */
export function linkShapeOf(cluster: Cluster, name: string): { upMbit: number | null; downMbit: number | null } {
  const [up, down] = ends(cluster, cluster.host(name)).map(([ns, dev]) => tbfRateMbit(sh('tc', ['-n', ns, 'qdisc', 'show', 'dev', dev])));
  return { upMbit: up ?? null, downMbit: down ?? null };
}

/** Parses "qdisc tbf 8001: root refcnt 2 rate 20Mbit burst 2500b lat 20ms" → 20; null without tbf. */
export function tbfRateMbit(qdiscShow: string): number | null {
  const m = /qdisc tbf [\s\S]*?\brate (\d+(?:\.\d+)?)([KMG]?)bit/.exec(qdiscShow);
  if (!m) return null;
  const scale = { '': 1e-6, K: 1e-3, M: 1, G: 1e3 }[m[2] as '' | 'K' | 'M' | 'G'];
  return Number(m[1]) * scale;
}

/** A sink on the receiving host: counts bytes, prints "sink <bytes> <ms>" from first byte to end. */
const SINK = `
const net = require('net');
const [host, port] = process.argv.slice(1);
const srv = net.createServer((s) => {
  let n = 0, t0 = 0;
  s.on('data', (d) => { if (!t0) t0 = performance.now(); n += d.length; });
  s.on('end', () => { console.log('sink ' + n + ' ' + (performance.now() - t0).toFixed(1)); s.end(); srv.close(); });
}).listen(Number(port), host, () => console.log('listening'));
`;
const SOURCE = `
const net = require('net');
const [host, port, bytes] = process.argv.slice(1);
setTimeout(() => { console.log('timeout'); process.exit(1); }, 120000);
const s = net.connect(Number(port), host, () => s.end(Buffer.alloc(Number(bytes))));
s.on('data', () => {});
s.on('close', () => process.exit(0));
`;

/**
 * Megabits per second of one TCP transfer of `bytes` from host `from` to host `to` (the receiver's clock, first
 * byte to last). For checking a shape; a few MB is enough at 20–1000 Mbit/s.
 */
export async function measureMbit(cluster: Cluster, from: string, to: string, bytes = 4_000_000, port = 9311): Promise<number> {
  if (!Number.isInteger(bytes) || bytes < 100_000 || bytes > 1_000_000_000) throw new Error(`transfer size ${bytes} bytes: give 100 kB–1 GB`);
  const src = cluster.host(from);
  const dst = cluster.host(to);
  const sink = dst.spawn([process.execPath, '-e', SINK, dst.address, String(port)], { label: `${to}:sink` });
  try {
    await sink.waitForLine(/^listening$/, 10_000);
    const sent = src.run([process.execPath, '-e', SOURCE, dst.address, String(port), String(bytes)], 125_000);
    if (sent.code !== 0) throw new Error(`sending ${bytes} bytes from ${from} to ${to} failed: ${sent.out.trim()}`);
    const m = await sink.waitForLine(/^sink (\d+) ([\d.]+)$/, 10_000);
    if (Number(m[1]) !== bytes) throw new Error(`${to} got ${m[1]} of ${bytes} bytes from ${from}`);
    return (bytes * 8) / 1e6 / (Math.max(Number(m[2]), 0.1) / 1000);
  } finally {
    await sink.stop(2_000);
  }
}
