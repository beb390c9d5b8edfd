/**
 * A machine awaiting approval: it joined with the join token and a signed request, but the coordinator has not
 * approved its node key, so it trains nothing and learns nothing about the others until a person approves
 * exactly this key (Workers view, `gpu-share workers approve NAME --key SHA256:…`). Also a node that came back
 * with another key than the one approved for it (`heldBackFrom`: the approved key's fingerprint), which waits
 * for `accept-key` instead. Shared by the coordinator, the HTTP API, the CLI and the renderer; plain data.
 */

export interface AwaitingMachine {
  /** The node name it asked for (not bound to it: a name is bound only once approved). */
  node: string;
  /** SHA256:… of the Ed25519 key it signed its join with. */
  fingerprint: string;
  /** The address the coordinator saw it connect from. */
  address: string | null;
  /** What its join said about its hardware. */
  hardware: { gpus: { name: string; vramTotalMb: number | null }[]; cpuCores: number; ramMb: number; torch: string | null };
  /** Epoch ms of its first and latest join. */
  firstSeen: number;
  lastSeen: number;
  /** Set when the node has an approved key and presented this other one: the approved key's fingerprint. */
  heldBackFrom?: string;
}

/** How many machines await approval at most; the oldest is forgotten (with its key and name) past this. */
export const MAX_AWAITING = 32;

/** A join's hardware in one line ("2 GPUs (RTX 4090), 16 cores, 64 GB RAM, torch 2.4"). */
export function describeAwaitingHardware(h: AwaitingMachine['hardware']): string {
  const names = [...new Set(h.gpus.map((g) => g.name))].join(', ');
  const gpus = h.gpus.length === 0 ? 'no GPU' : `${h.gpus.length} GPU${h.gpus.length === 1 ? '' : 's'} (${names})`;
  const ram = h.ramMb >= 1024 ? `${Math.round(h.ramMb / 1024)} GB RAM` : `${Math.round(h.ramMb)} MB RAM`;
  return `${gpus}, ${h.cpuCores} cores, ${ram}, ${h.torch ? `torch ${h.torch}` : 'no torch'}`;
}

/**
 * A machine approved by its key before it is listed (issue 26, item 6): `gpu-share workers approve NAME --key
 * SHA256:…` when no machine of that name awaits with that key. The next join under that name (however spelled)
 * signed by a key of exactly that fingerprint is admitted, and the pre-approval becomes the node's approval.
 */
export interface PreApproval {
  node: string;
  fingerprint: string;
  /** Epoch ms it was made, and when it lapses unless a join met it. */
  at: number;
  expiresAt: number;
}

/** How many pre-approvals are kept at most, and how long one lasts. */
export const PRE_APPROVAL_BOUNDS = { max: 64, ttlMs: 24 * 3600_000 } as const;
