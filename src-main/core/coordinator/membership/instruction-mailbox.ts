/**
 * One worker's instructions not yet acknowledged, with sequence numbers. Agents poll (nothing connects to a
 * worker), so an instruction waits here until a heartbeat answer carries it; an agent that acknowledges gets it
 * again in every answer until it does, so an answer lost in transit loses nothing.
 */
import type { Instruction } from '../../../../src-shared/worker-protocol';

/** Past this many unacknowledged instructions the oldest are dropped (an agent that never acks cannot grow us). */
export const MAX_PENDING_INSTRUCTIONS = 64;

export class InstructionMailbox {
  /** pending[i] has sequence number base + i. */
  private pending: Instruction[] = [];
  private base = 1;
  /** How many of `pending` (a prefix) have been handed out; the rest were never sent and may still be cancelled. */
  private sent = 0;

  constructor(private readonly onQueued: () => void = () => {}) {}

  queue(instruction: Instruction): void {
    this.pending.push(instruction);
    this.onQueued();
    if (this.pending.length > MAX_PENDING_INSTRUCTIONS) this.dropOldest(this.pending.length - MAX_PENDING_INSTRUCTIONS);
  }

  /** Forgets every pending instruction; sequence numbers go on rising, so an old number never means a new instruction. */
  clear(): void {
    this.dropOldest(this.pending.length);
  }

  /**
   * The instructions for a heartbeat's answer. With an `ack`, everything past it (again and again until
   * acknowledged); without one (an agent that does not acknowledge), each instruction once.
   */
  handOut(ack: number | undefined): { instructions: Instruction[]; firstSeq?: number } {
    if (ack === undefined) {
      const instructions = this.pending.slice();
      this.clear();
      return { instructions };
    }
    this.dropOldest(ack - this.base + 1);
    this.sent = this.pending.length;
    return { instructions: this.pending.slice(), firstSeq: this.base };
  }

  /**
   * Queues a stop of a generation — or, when that generation's start was never handed out, cancels the start
   * instead. A start already handed out (even if not yet acknowledged) may be running, so it gets its stop.
   */
  queueStop(runId: string, generation: number, reason: string): void {
    const i = this.pending.findIndex(
      (x, index) => index >= this.sent && x.kind === 'start' && x.plan.runId === runId && x.plan.generation === generation,
    );
    if (i !== -1) {
      // Never sent, so no agent saw its number: the ones after it move up and stay consecutive.
      this.pending.splice(i, 1);
      return;
    }
    this.queue({ kind: 'stop', runId, generation, reason });
  }

  private dropOldest(count: number): void {
    const n = Math.max(0, Math.min(count, this.pending.length));
    this.pending.splice(0, n);
    this.base += n;
    this.sent = Math.max(0, this.sent - n);
  }
}
