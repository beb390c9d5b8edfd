/**
 * The SSH side of the Nodes view: each `transport: ssh` node's start state as the core last sent it (getNodeSsh
 * at load and after a reconnect, then onNodeSsh per node), which agent logs the person opened, and the host key
 * waiting for a yes. Pure transitions and readings; the bridge's event and the commands are in node-ssh-commands.ts.
 */
import type { NodeSshStatus } from '../../../src-shared/nodes/ipc-ssh';
import type { SshStartState } from '../../../src-shared/nodes/node-status';

export interface NodeSshSlice {
  /** By node name; a node absent here was not started from this app. */
  byName: Record<string, NodeSshStatus>;
  /** Nodes whose agent log tail is shown. */
  logOpen: string[];
  loadError: string | null;
}

export function initialNodeSshSlice(): NodeSshSlice {
  return { byName: {}, logOpen: [], loadError: null };
}

/** Any state that holds the SSH nodes slice (AppState does); the slice's transitions keep the rest as it is. */
export interface NodeSshHolder {
  /** Start / stop of the transport: ssh nodes and the host key waiting for a yes. */
  nodeSsh: NodeSshSlice;
}


/** The core's whole list replaces the page's (a reconnect may have missed changes). */
export function setNodeSshList<S extends NodeSshHolder>(s: S, list: NodeSshStatus[]): S {
  return { ...s, nodeSsh: { ...s.nodeSsh, byName: Object.fromEntries(list.map((n) => [n.name, n])), loadError: null } };
}

export function upsertNodeSsh<S extends NodeSshHolder>(s: S, status: NodeSshStatus): S {
  return { ...s, nodeSsh: { ...s.nodeSsh, byName: { ...s.nodeSsh.byName, [status.name]: status } } };
}

export function nodeSshLoadFailed<S extends NodeSshHolder>(s: S, message: string): S {
  return { ...s, nodeSsh: { ...s.nodeSsh, loadError: message } };
}

export function toggleSshLog<S extends NodeSshHolder>(s: S, name: string): S {
  const open = s.nodeSsh.logOpen.includes(name);
  return { ...s, nodeSsh: { ...s.nodeSsh, logOpen: open ? s.nodeSsh.logOpen.filter((n) => n !== name) : [...s.nodeSsh.logOpen, name] } };
}

/** What a failed SSH start's badge says; the whole cause is the sentence under it, not repeated in the badge. */
export const SSH_FAILED_BADGE = 'could not start over SSH (see below)';

/**
 * What the card badges take from SSH: anything between Start and the join reads Starting (a host key waiting
 * for a yes says so), a failed start reads Failed. Online and offline come from the worker list.
 */
export function sshStartStates(slice: NodeSshSlice): Map<string, SshStartState> {
  const out = new Map<string, SshStartState>();
  for (const status of Object.values(slice.byName)) {
    if (status.state === 'starting' || status.state === 'stopping') out.set(status.name, { state: 'starting', detail: status.detail });
    else if (status.state === 'awaiting-host-key') out.set(status.name, { state: 'starting', detail: 'waiting for you to accept its host key' });
    else if (status.state === 'failed') out.set(status.name, { state: 'failed', detail: SSH_FAILED_BADGE });
  }
  return out;
}

/** The host key the page asks about: the first node (by name) waiting for one. */
export function pendingHostKey(slice: NodeSshSlice): { name: string; fingerprint: string } | null {
  const waiting = Object.values(slice.byName)
    .filter((n) => n.state === 'awaiting-host-key' && n.fingerprint)
    .sort((a, b) => a.name.localeCompare(b.name));
  const first = waiting[0];
  return first?.fingerprint ? { name: first.name, fingerprint: first.fingerprint } : null;
}

export interface SshButtons {
  start: 'Start' | 'Start again' | null;
  /** "Start and keep": start and install as a service there; offered wherever Start is. */
  keep: boolean;
  stop: boolean;
  /** Stop asks first whether to uninstall the service too (the node is kept). */
  stopAsks: boolean;
  /** Set while a stop is under way: the card shows it instead of the buttons. */
  pending: string | null;
}

/** Which buttons a card shows for its SSH state (a host key waiting for a yes is answered in the dialog). */
export function sshButtons(status: NodeSshStatus | undefined): SshButtons {
  const kept = status?.kept === true;
  switch (status?.state ?? 'offline') {
    case 'offline':
      // A kept node that is stopped still has its service: Stop (and uninstall) stays offered.
      return { start: 'Start', keep: !kept, stop: kept, stopAsks: kept, pending: null };
    case 'failed':
      return { start: 'Start again', keep: !kept, stop: true, stopAsks: kept, pending: null };
    case 'starting':
    case 'online':
      return { start: null, keep: false, stop: true, stopAsks: kept, pending: null };
    case 'awaiting-host-key':
      return { start: null, keep: false, stop: false, stopAsks: false, pending: 'Waiting for the host key answer' };
    case 'stopping':
      return { start: null, keep: false, stop: false, stopAsks: false, pending: 'Stopping…' };
  }
}
