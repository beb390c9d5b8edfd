/**
 * Plain http may go to `localhost` (clear-text.ts) only because it is this machine: so the name is resolved once,
 * here, and the socket connects to what was resolved only when every answer is a loopback address. A resolver
 * that maps `localhost` elsewhere (a LAN DNS server, a hosts file someone edited) gets no connection, and so no
 * token in clear. Literal addresses never reach a lookup.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isLoopbackAddress } from '../../../src-shared/cluster/loopback';

type Resolve = typeof dns.lookup;

interface Answer {
  address: string;
  family: number;
}

/** A `lookup` for http.Agent that refuses (ECONNREFUSED-like, naming the address) any non-loopback answer. */
export function loopbackOnlyLookup(resolve: Resolve = dns.lookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, answers) => {
      if (error) return callback(error, '', 0);
      const all = answers as unknown as Answer[];
      const away = all.find((a) => !isLoopbackAddress(a.address));
      if (away || all.length === 0) {
        const refused = Object.assign(
          new Error(`${hostname} resolves to ${away?.address ?? 'nothing'}, not to this machine's loopback: plain http there would send the token in clear, so nothing was sent; use --url http://127.0.0.1:PORT`),
          { code: 'ENOTLOOPBACK' },
        );
        return callback(refused, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: Answer[]) => void)(null, all);
      return callback(null, all[0]!.address, all[0]!.family);
    });
  };
}
