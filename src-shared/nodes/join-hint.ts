/**
 * What the "Add a worker" panel and `serve`'s printed line say above the join command, so the words match the
 * command below them (issue 17 defect 10): a coordinator that listens on loopback only can be joined from this
 * machine alone, so the hint says so, says how to listen on the LAN, and the command names the worker (--name):
 * without it the worker would claim this machine's own worker's name and be refused. Pure: the Workers view and
 * the CLI share it. The titles hold no colon: `serve` prints "<title>: <command>", which scripts split at ": ".
 */
import type { CoordinatorInfo } from '../training';

export interface JoinHint {
  /** The line above the command. */
  title: string;
  /** The command to copy: the coordinator's, with --name when it can only run on this machine. */
  command: string;
}

/** The flag of `gpu-share serve` (and the app) that opens the coordinator to other machines. */
export const LAN_FLAG = '--coordinator-host 0.0.0.0';

/** A second worker's name on this machine: the own worker's name with "-2". */
export function secondWorkerName(ownNode: string): string {
  return `${ownNode || 'worker'}-2`;
}

export function joinHint(info: Pick<CoordinatorInfo, 'joinCommand' | 'reachableFromOtherMachines'>, ownNode: string): JoinHint {
  if (info.reachableFromOtherMachines) {
    return { title: 'Add a worker: run this on another machine', command: info.joinCommand };
  }
  const hasName = /\s--name\s/.test(`${info.joinCommand} `);
  return {
    title: `Add a worker on this machine (the coordinator listens on loopback only; start GPU Share with ${LAN_FLAG} to let other machines join)`,
    command: hasName ? info.joinCommand : `${info.joinCommand} --name ${secondWorkerName(ownNode)}`,
  };
}
