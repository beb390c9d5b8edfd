/**
 * The attacker of bench/abuse-held-sockets.ts, in a process of its own so the server's RSS is the server's:
 * sockets from many 127.0.0.0/8 addresses that each start a request and then send one byte a second, opened
 * again a second after the server closes them, until the time is up. `body`: a POST /v1/join/challenge that
 * declares DECLARED bytes and sends half of them (at most 1 KiB); `drip`: a GET whose headers never end (slowloris). Prints one
 * JSON line: connections made and the statuses answered (http0: closed without one).
 *
 *   node scripts/run-ts.mjs bench/lib/held-sockets-client.ts MODE PORT PREFIX ADDRESSES PER_ADDRESS MS [DECLARED]
 */
import net from 'node:net';

const [mode, port, prefix, addresses, perAddress, ms, declared] = process.argv.slice(2);
const stopAt = Date.now() + Number(ms);
const counts: Record<string, number> = {};
let made = 0;

function start(): string {
  if (mode === 'drip') return 'GET / HTTP/1.1\r\nhost: 127.0.0.1\r\nx-drip: ';
  const length = Number(declared);
  return `POST /v1/join/challenge HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n${'{'.padEnd(Math.min(1024, Math.floor(length / 2)), ' ')}`;
}

function one(localAddress: string): void {
  if (Date.now() > stopAt) return;
  made++;
  const sock = net.connect({ host: '127.0.0.1', port: Number(port), localAddress });
  let got = '';
  let timer: NodeJS.Timeout | null = null;
  sock.on('connect', () => {
    sock.write(start());
    timer = setInterval(() => (sock.writable ? sock.write(mode === 'drip' ? 'x' : ' ') : undefined), 1_000);
  });
  sock.on('data', (d: Buffer) => (got += d.toString('latin1', 0, Math.min(d.length, 64))));
  sock.on('error', () => undefined);
  sock.on('close', () => {
    if (timer) clearInterval(timer);
    const status = /^HTTP\/1\.1 (\d+)/.exec(got)?.[1] ?? '0';
    counts[`http${status}`] = (counts[`http${status}`] ?? 0) + 1;
    setTimeout(() => one(localAddress), 1_000);
  });
}

for (let a = 1; a <= Number(addresses); a++) for (let i = 0; i < Number(perAddress); i++) one(`${prefix}.${a}`);
setTimeout(() => {
  console.log(JSON.stringify({ made, ...counts }));
  process.exit(0);
}, Number(ms) + 500);
