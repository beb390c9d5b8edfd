/**
 * The wire shapes of a link probe, kept out of worker-protocol.ts (which only lists them in its unions): the
 * coordinator tells one agent to expect a probe (`accept-link-probe`, a single-use token) and another to send it
 * (`measure-links`), and the sender reports what it measured (`links`). The probe itself is plain TCP between the
 * two agents (src-main/agent/link-probe-server.ts, link-probe-client.ts); this file is only the control messages.
 */
import { z } from 'zod';

/** Caps a hostile or confused peer cannot exceed: the probe's size and time, and how many targets one instruction names. */
export const LINK_PROBE_CAPS = {
  /** Bytes one bandwidth transfer may send (the server stops reading after this). */
  maxBytes: 8 * 1024 * 1024,
  /** Wall-clock of one probe, pings and transfer together. */
  maxMs: 10_000,
  /** Targets one measure-links instruction names. */
  maxTargets: 64,
  /** A token is good for at most this long. */
  maxTokenMs: 30_000,
} as const;

/** A token is 32 base64url characters or more (the coordinator makes 24 random bytes). */
export const LINK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

/** To the receiving agent: the next probe connection that presents this token (once, before it expires) is from fromNode. */
export const acceptLinkProbeInstructionSchema = z.object({
  kind: z.literal('accept-link-probe'),
  token: z.string().regex(LINK_TOKEN_PATTERN),
  fromNode: z.string().max(200),
  expiresInMs: z.number().int().positive().max(LINK_PROBE_CAPS.maxTokenMs),
  /** The addresses fromNode may connect from (the coordinator's view of it); a connection from any other is closed at once. Older coordinators name none. */
  fromAddresses: z.array(z.string().min(1).max(64)).max(8).optional(),
});
export type AcceptLinkProbeInstruction = z.infer<typeof acceptLinkProbeInstructionSchema>;

export const linkProbeTargetSchema = z.object({
  workerId: z.number().int().nonnegative(),
  node: z.string().max(200),
  host: z.string().min(1).max(255),
  port: z.number().int().min(1).max(65535),
  token: z.string().regex(LINK_TOKEN_PATTERN),
});
export type LinkProbeTarget = z.infer<typeof linkProbeTargetSchema>;

/** To the sending agent: measure each target in turn (one at a time) and report `links` with this probeId. */
export const measureLinksInstructionSchema = z.object({
  kind: z.literal('measure-links'),
  probeId: z.string().min(1).max(100),
  targets: z.array(linkProbeTargetSchema).max(LINK_PROBE_CAPS.maxTargets),
  maxBytes: z.number().int().positive().max(LINK_PROBE_CAPS.maxBytes),
  maxMs: z.number().int().positive().max(LINK_PROBE_CAPS.maxMs),
});
export type MeasureLinksInstruction = z.infer<typeof measureLinksInstructionSchema>;

export const linkProbeResultSchema = z.object({
  toId: z.number().int().nonnegative(),
  /** Megabits per second of the timed transfer; null when the probe failed. */
  mbps: z.number().nonnegative().max(1e7).nullable(),
  /** Least round-trip time of a few pings, in ms; null when the probe failed. */
  rttMs: z.number().nonnegative().max(600_000).nullable(),
  error: z.string().max(500).optional(),
});
export type LinkProbeResult = z.infer<typeof linkProbeResultSchema>;

/** From the sending agent: what it measured for one measure-links instruction. */
export const linksReportSchema = z.object({
  type: z.literal('links'),
  probeId: z.string().min(1).max(100),
  results: z.array(linkProbeResultSchema).max(LINK_PROBE_CAPS.maxTargets),
});
export type LinksReport = z.infer<typeof linksReportSchema>;
