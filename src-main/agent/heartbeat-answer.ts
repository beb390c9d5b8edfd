/**
 * Reading a heartbeat's answer. An answer that is not a heartbeat answer at all (a proxy's HTML page, `null`)
 * counts as a failed heartbeat, so a stranger answering 200 cannot keep an agent "joined"; within a real
 * answer, one malformed instruction is dropped but keeps its number, and the good ones beside it are obeyed.
 */
import { z } from 'zod';
import { workerApi } from '../../src-shared/worker-api';
import type { Instruction } from '../../src-shared/worker-protocol';

const replySchema = workerApi.heartbeat.reply;
const instructionSchema = replySchema.shape.instructions.element;
/** The table's reply, with the instructions left to be parsed one by one. */
const frameSchema = replySchema.extend({
  instructions: z.array(z.unknown()).max(10_000),
  firstSeq: replySchema.shape.firstSeq.unwrap().max(Number.MAX_SAFE_INTEGER).optional(),
});

export type HeartbeatAnswer =
  | {
      ok: true;
      /** In order; null where an instruction was invalid (its number is still taken). */
      instructions: (Instruction | null)[];
      /** The invalid ones, shortened, for the log. */
      invalid: string[];
      heartbeatTimeoutMs: number | null;
      firstSeq: number | null;
    }
  | { ok: false; why: string };

export function readHeartbeatAnswer(body: unknown): HeartbeatAnswer {
  const frame = frameSchema.safeParse(body);
  if (!frame.success) {
    return { ok: false, why: `the answer is not a heartbeat answer (${JSON.stringify(body)?.slice(0, 100) ?? 'nothing'})` };
  }
  const instructions: (Instruction | null)[] = [];
  const invalid: string[] = [];
  for (const item of frame.data.instructions) {
    const one = instructionSchema.safeParse(item);
    instructions.push(one.success ? one.data : null);
    if (!one.success) invalid.push(JSON.stringify(item)?.slice(0, 200) ?? String(item));
  }
  return {
    ok: true,
    instructions,
    invalid,
    heartbeatTimeoutMs: frame.data.heartbeatTimeoutMs ?? null,
    firstSeq: frame.data.firstSeq ?? null,
  };
}
