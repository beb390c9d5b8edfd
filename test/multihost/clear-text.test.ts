/**
 * Nothing secret in clear beyond loopback (issue 14, item 2), as a listener on the LAN would see it: host B runs
 * a capture server on plain TCP that records every connection and every byte. From host A, `gpu-share worker
 * --join http://<B>:port` (join token in GPU_SHARE_JOIN_TOKEN) and `gpu-share runs list --url http://<B>:port
 * --token T` are refused with what to do instead, and B's capture holds no request at all — so no token byte.
 * A control request first proves the capture would have seen them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appBuild, releaseBuild, type AppBuild } from './helpers/app-snapshot';
import { canMakeHosts, required } from './helpers/can-make-hosts';
import { Cluster } from './helpers/hosts';
import type { HostProcess } from './helpers/host-process';

const PORT = 7421;
const JOIN_TOKEN = 'clear-text-join-token-0123456789abcdef';
const OPERATOR_TOKEN = 'clear-text-operator-token-fedcba9876543210';

/** Prints "listening", then "conn" for every connection and "data <hex>" for every chunk; answers 503. */
const CAPTURE = `
const net = require('net');
const [host, port] = process.argv.slice(1);
net.createServer((s) => {
  console.log('conn ' + s.remoteAddress);
  s.on('data', (d) => {
    console.log('data ' + d.toString('hex'));
    s.end('HTTP/1.1 503 Service Unavailable\\r\\ncontent-length: 0\\r\\nconnection: close\\r\\n\\r\\n');
  });
  s.on('error', () => {});
}).listen(Number(port), host, () => console.log('listening'));
`;

/** A plain HTTP GET with one header, the control that proves the capture sees what is sent. */
const PROBE = `
const http = require('http');
const [url] = process.argv.slice(1);
http.get(url, { headers: { 'x-probe': 'control-bytes' } }, (r) => { r.resume(); r.on('end', () => process.exit(0)); }).on('error', (e) => { console.log(e.code); process.exit(1); });
setTimeout(() => process.exit(1), 5000);
`;

describe.skipIf(!required(canMakeHosts(), 'the clear-text capture case'))('tokens never cross the LAN in clear', () => {
  let cluster: Cluster;
  let capture: HostProcess;
  let build: AppBuild;
  let home: string;
  let target: string;

  const captured = (from = 0) => capture.lines.slice(from).map((l) => l.text);
  const capturedBytes = (from = 0) =>
    captured(from)
      .filter((l) => l.startsWith('data '))
      .map((l) => Buffer.from(l.slice(5), 'hex').toString('latin1'))
      .join('');

  beforeAll(async () => {
    build = await appBuild();
    home = mkdtempSync(path.join(tmpdir(), 'gpu-share-clear-text-'));
    cluster = Cluster.create(['a', 'b']);
    const b = cluster.host('b');
    target = `http://${b.address}:${PORT}`;
    capture = b.spawn([process.execPath, '-e', CAPTURE, b.address, String(PORT)], { label: 'b:capture' });
    await capture.waitForLine(/^listening$/, 10_000);
    // The control: a plain request from A reaches B's capture, header and all.
    const probe = cluster.host('a').run([process.execPath, '-e', PROBE, `${target}/v1/health`]);
    expect(probe.code, probe.out).toBe(0);
    await capture.waitForLine(/^data /, 5_000);
    expect(capturedBytes()).toContain('x-probe: control-bytes');
  }, 90_000);

  afterAll(async () => {
    await cluster?.destroy(2_000);
    if (home) rmSync(home, { recursive: true, force: true });
    releaseBuild();
  });

  it('`gpu-share worker --join http://<B>` and `runs list --url http://<B> --token T` are refused, and B hears nothing', async () => {
    const a = cluster.host('a');
    const before = capture.lines.length;
    const env = ['env', `GPU_SHARE_HOME=${home}`, `PATH=${process.env.PATH ?? '/usr/bin:/bin'}`];

    const worker = a.run([...env, `GPU_SHARE_JOIN_TOKEN=${JOIN_TOKEN}`, process.execPath, build.cli, 'worker', '--join', target, '--name', 'host-a'], 20_000);
    expect(worker.code, worker.out).toBe(2);
    expect(worker.out).toContain(
      `gpu-share worker: ${target} is plain http to a host other than this machine's loopback (127.0.0.1, ::1, localhost), so the join token would cross the network unencrypted; nothing was sent. ` +
        "Use the https:// URL with --cert-sha256 from the coordinator's Add a worker panel",
    );

    const runs = a.run([...env, process.execPath, build.cli, 'runs', 'list', '--url', target, '--token', OPERATOR_TOKEN], 20_000);
    expect(runs.code, runs.out).toBe(2);
    expect(runs.out).toContain(`--url: ${target} is plain http to a host other than this machine's loopback`);
    expect(runs.out).toContain(`ssh -L ${PORT}:127.0.0.1:${PORT} ${cluster.host('b').address}`);

    // Anything sent would have arrived by now (both commands have exited); give the capture's pipe a moment.
    await new Promise((r) => setTimeout(r, 500));
    expect(captured(before), 'B saw a connection').toEqual([]);
    const bytes = capturedBytes(before);
    expect(bytes).not.toContain(JOIN_TOKEN);
    expect(bytes).not.toContain(OPERATOR_TOKEN);
  });
});
