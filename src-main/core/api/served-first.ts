/**
 * Which peers the coordinator port serves first when strangers crowd it (issue 26, item 4): loopback (the
 * app's own worker and tools on this machine, which hold the data folder's tokens anyway) and the addresses
 * the cluster's machines were seen at. These get the share of the socket caps and of the pre-auth body budget
 * that strangers cannot take, so a flood from the LAN does not stop a worker's rejoin or heartbeats.
 */
import type { WorkerSnapshot } from '../../../src-shared/training';
import { isLoopbackAddress } from '../../platform/net/address-key';
import { unwrapAddress } from '../coordinator/membership';

/** The set is rebuilt at most this often (every connection asks). */
const REFRESH_MS = 1_000;

/** `(address) => served first?` over the machines `workers()` lists now (any state but left). */
export function servedFirstByCluster(workers: () => readonly Pick<WorkerSnapshot, 'address' | 'state'>[], now: () => number = Date.now): (address: string) => boolean {
  let known = new Set<string>();
  let builtAt = -Infinity;
  return (address) => {
    if (isLoopbackAddress(address)) return true;
    if (now() - builtAt >= REFRESH_MS) {
      known = new Set(workers().flatMap((w) => (w.state !== 'left' && w.address ? [unwrapAddress(w.address)!] : [])));
      builtAt = now();
    }
    const unwrapped = unwrapAddress(address);
    return unwrapped !== null && known.has(unwrapped);
  };
}
