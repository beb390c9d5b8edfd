/**
 * `gpu-share serve --host 0.0.0.0` on host A (issue 14 leftover): the page URL it prints for another machine
 * carries A's LAN address, not 127.0.0.1, and B opens exactly that URL over HTTPS, finding the certificate whose
 * SHA-256 fingerprint serve printed (the check a person makes when the browser warns: the certificate names no
 * address, so the fingerprint is the trust anchor).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeProcesses } from '../integration/helpers/pid-tracker';
import { PAGE_PORT } from './helpers/app';
import { canRunApp, required } from './helpers/can-make-hosts';
import { startApp, stopTestbed, type Testbed } from './helpers/testbed';

/** On B: GET the URL over TLS without a CA, print the status, the peer certificate's fingerprint and the title. */
const OPEN_PAGE = `
const https = require('https');
const [url] = process.argv.slice(1);
https.get(url, { rejectUnauthorized: false }, (r) => {
  const fp = r.socket.getPeerCertificate().fingerprint256;
  let body = '';
  r.on('data', (d) => (body += d));
  r.on('end', () => { console.log(JSON.stringify({ status: r.statusCode, fp, title: /<title>([^<]*)/.exec(body)?.[1] ?? null })); process.exit(0); });
}).on('error', (e) => { console.log(JSON.stringify({ error: e.code || e.message })); process.exit(1); });
setTimeout(() => process.exit(2), 8000);
`;

describe.skipIf(!required(canRunApp(), 'the page-beyond-loopback case'))('serve --host 0.0.0.0: the page URL for other machines', () => {
  let tb: Testbed | null = null;

  beforeAll(async () => {
    tb = await startApp({ hosts: ['a', 'b'], app: { localWorker: false, extraArgs: ['--host', '0.0.0.0', '--no-advertise'] } });
  }, 90_000);

  afterAll(async () => {
    if (!tb) return;
    const left = await stopTestbed(tb);
    expect(left, `processes left: ${describeProcesses(left)}`).toEqual([]);
  });

  it("prints A's LAN address (not 127.0.0.1) with the fingerprint, and B opens that URL and finds that certificate", async () => {
    const { app, cluster } = tb!;
    const a = cluster.host('a');
    const fingerprint = (await app.proc.waitForLine(/SHA-256 fingerprint: ((?:[0-9A-F]{2}:){31}[0-9A-F]{2})$/, 10_000))[1]!;
    const others = app.proc.lines.map((l) => /^From another machine, open: (\S+)$/.exec(l.text)?.[1]).filter((u): u is string => u !== undefined);
    expect(others).toHaveLength(1); // A has one non-loopback address: its cable's
    const url = new URL(others[0]!);
    expect([url.protocol, url.hostname, url.port]).toEqual(['https:', a.address, String(PAGE_PORT)]);
    expect(url.searchParams.get('token')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const opened = cluster.host('b').run([process.execPath, '-e', OPEN_PAGE, url.href], 15_000);
    expect(opened.code, opened.out).toBe(0);
    expect(JSON.parse(opened.out.trim().split('\n').at(-1)!)).toMatchObject({ status: 200, fp: fingerprint });
  });
});
