/**
 * How many workers an ended run had when it ended: the members of its last generation that did not fail. An
 * ended run has no members any more (workerIds is empty), so "Workers 0" was all the page and `runs show` said.
 */
import type { RunSnapshot } from '../training';

export function workersAtEnd(run: Pick<RunSnapshot, 'workerRows'>): number {
  return (run.workerRows ?? []).filter((r) => r.member && r.end !== 'failed').length;
}
