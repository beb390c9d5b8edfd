/**
 * Chromium, in the test process on the machine's loopback, reaching the page `gpu-share serve` serves on a
 * namespace host's loopback without touching the machine's interfaces: a relay inside the host from a Unix
 * socket to the page port, and here a TCP server on 127.0.0.1 that pipes each connection (WebSockets
 * included) to that socket. The page refuses a Host header that names another port than its own, so serve
 * listens inside the host on the same port number as the server here: listen() first, then serve with
 * `pagePort: relay.port`, then connect().
 */
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import path from 'node:path';
import type { App } from './app';
import { startProxy, type ProxyOnHost } from './proxy-process';

const PAGE_LINE = /GPU Share is running: (http:\/\/\S+)/;

export class PageRelay {
  private socketPath: string | null = null;
  private relay: ProxyOnHost | null = null;
  private readonly open = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {
    server.on('connection', (client) => this.pipe(client));
  }

  /** A server on 127.0.0.1 at a free port; connections wait for connect() (before it they are closed). */
  static async listen(): Promise<PageRelay> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the page relay got no TCP port');
    return new PageRelay(server, address.port);
  }

  /** Starts the relay inside the app's host (socket in its data folder) to its page port; returns the page URL. */
  async connect(app: App): Promise<string> {
    const line = app.proc.lines.find((l) => PAGE_LINE.test(l.text));
    if (!line) throw new Error(`serve on ${app.host.name} printed no "GPU Share is running:" line:\n${app.proc.tail(10)}`);
    const url = new URL(PAGE_LINE.exec(line.text)![1]!);
    if (Number(url.port) !== this.port) throw new Error(`serve's page is on port ${url.port}, not ${this.port}: start the app with pagePort: relay.port`);
    this.socketPath = path.join(app.dataDir, 'page.sock');
    this.relay = await startProxy(app.host, `unix:${this.socketPath}`, `127.0.0.1:${this.port}`, undefined, `${app.host.name}:page-relay`);
    return url.href;
  }

  private pipe(client: Socket): void {
    if (!this.socketPath) {
      client.destroy();
      return;
    }
    const upstream = netConnect(this.socketPath);
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      this.open.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.open.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  }

  /** Closes every piped connection, the server here and the relay in the host. */
  async close(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.relay?.proc.stop(2_000);
  }
}
