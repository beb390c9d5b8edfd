/**
 * The instructions a session's heartbeat answers bring, each carried out once and one after another. The
 * coordinator numbers them and repeats what the agent has not acknowledged (an answer lost on the way loses no
 * instruction), and answers may cross: the inbox remembers the last number taken, sends it back as the ack, and
 * skips any instruction at or below it. An instruction queued under a session that has since ended is dropped.
 *
 * Each run's instructions (start, stop) wait only for that run's earlier ones: a machine training two runs (one
 * per GPU set) does not hold run B's start behind run A's stop grace. The rest (jobs, drain, link probes) keep
 * one line of their own.
 */
import type { Instruction } from '../../src-shared/worker-protocol';
import type { HeartbeatAnswer } from './heartbeat-answer';

export interface InstructionInboxOptions {
  /** Carries one instruction out; the next waits until it has finished. */
  obey: (instruction: Instruction, epoch: number) => Promise<void>;
  /** The session number now (see AgentSession.epoch). */
  epoch: () => number;
  log: (line: string) => void;
}

export class InstructionInbox {
  /** Sequence number of the last instruction taken in this session (0: none). */
  private lastSeq = 0;
  /** The tail of each line of instructions: 'agent', or 'run:<id>' for a run's; a line is forgotten once it is done. */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(private readonly opts: InstructionInboxOptions) {}

  /** What the next heartbeat acknowledges. */
  get ack(): number {
    return this.lastSeq;
  }

  /** A new session: the coordinator numbers its instructions from 1 again. */
  reset(): void {
    this.lastSeq = 0;
  }

  /** Queues the new instructions of a heartbeat answer taken under session `epoch`. */
  take(answer: Extract<HeartbeatAnswer, { ok: true }>, epoch: number): void {
    for (const invalid of answer.invalid) this.opts.log(`ignored an invalid instruction: ${invalid}`);
    for (const [i, instruction] of answer.instructions.entries()) {
      if (answer.firstSeq !== null) {
        // Numbered: the coordinator repeats what we have not acknowledged, and answers may cross; take each once.
        const seq = answer.firstSeq + i;
        if (seq <= this.lastSeq) continue;
        this.lastSeq = seq;
      }
      if (instruction === null) continue; // invalid: its number is taken all the same
      const line = lineOf(instruction);
      const tail = (this.chains.get(line) ?? Promise.resolve())
        .then(() => (epoch === this.opts.epoch() ? this.opts.obey(instruction, epoch) : undefined))
        .catch((error: unknown) => this.opts.log(`could not carry out ${instruction.kind}: ${error instanceof Error ? error.message : String(error)}`))
        .finally(() => {
          if (this.chains.get(line) === tail) this.chains.delete(line);
        });
      this.chains.set(line, tail);
    }
  }

  /** Resolves once every instruction queued so far has been carried out (or dropped). */
  async settled(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }
}

/** Which line an instruction waits in: its run's, or the agent's own. */
function lineOf(instruction: Instruction): string {
  if (instruction.kind === 'start') return `run:${instruction.plan.runId}`;
  if (instruction.kind === 'stop' || instruction.kind === 'comm-update') return `run:${instruction.runId}`;
  return 'agent';
}
