/**
 * Clients that hold a server's sockets without ever finishing or reading (the socket-bounds tests of the
 * coordinator port and the page port), and a poll that answers whether a condition came true in time.
 */
import net from 'node:net';

/** A socket from `localAddress` that writes `payload` (if any) and then never reads; kept in `opened` for cleanup. */
export function dripper(opened: net.Socket[], port: number, payload: string | null, localAddress = '127.0.0.1'): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: '127.0.0.1', port, localAddress });
    opened.push(sock);
    sock.on('error', () => undefined);
    sock.once('connect', () => {
      if (payload !== null) sock.write(payload);
      sock.pause();
      resolve(sock);
    });
    sock.once('error', reject);
  });
}

/** Whether `test` holds within `ms`, polled every 25 ms. */
export async function holdsWithin(test: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (test()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return test();
}
