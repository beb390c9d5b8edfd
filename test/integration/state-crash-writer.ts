/**
 * The writer half of state-crash.test.ts, run as its own process: writes runs, workers, events, counters and
 * output to state.db in a loop and prints one line per acknowledged write, only after the call returned —
 * so every line the parent read before its SIGKILL names a write that must survive it.
 * Usage: node state-crash-writer.cjs DATA_DIR
 */
import { writeSync } from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { COUNTERS, openStateDb } from '../../src-main/core/state/index';
import { event, registered, storedRun } from '../unit/state/fixtures';

/** Synchronous, so a line is in the pipe before the next write starts. */
function ack(line: string): void {
  writeSync(1, `${line}\n`);
}

async function main(dir: string): Promise<never> {
  const db = openStateDb(dir, { limits: { maxEvents: 1_000_000 }, batch: { flushMs: 20 } });
  const firstSeq = db.events.lastSeq() + 1;
  ack('ready');
  for (let i = 0; ; i++) {
    const runId = `run-${process.pid}-${i}`;
    db.runs.save(storedRun(runId, { generation: i }));
    ack(`run ${runId}`);
    db.events.append(event(firstSeq + i, { runId, message: `event ${i} ${'x'.repeat(i % 200)}` }));
    ack(`event ${firstSeq + i}`);
    const workerId = db.kv.next(COUNTERS.workerId);
    ack(`counter ${workerId}`);
    db.workers.save(registered(workerId));
    ack(`worker ${workerId}`);
    for (let c = 0; c < 5; c++) db.output.append(runId, { workerId, node: `node-${workerId}`, data: `${runId} chunk ${c} ${'y'.repeat(i % 500)}\n` });
    db.workers.touch(workerId, Date.now());
    if (i % 3 === 0) {
      db.flush();
      ack(`output ${runId}`);
    }
    if (i % 10 === 0) await yieldToLoop(); // lets the timed flush run too
  }
}

const dir = process.argv[2];
if (!dir) throw new Error('usage: state-crash-writer DATA_DIR');
void main(dir);
