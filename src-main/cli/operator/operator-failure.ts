/** Why an operator command failed, with the exit code the CLI documents for it (docs/cli.md). */

export const EXIT = {
  ok: 0,
  /** The coordinator answered and refused the action (draining a worker that is not active, a bad spec). */
  refused: 1,
  /** A bad command line. */
  usage: 2,
  /** No coordinator answered (not running, wrong URL), or something that is not one did. */
  unreachable: 3,
  /** The token was refused (401), or there is none to send. */
  unauthorized: 4,
  /** No such run or worker. */
  notFound: 5,
} as const;

export type FailureKind = 'not-running' | 'unreachable' | 'untrusted' | 'not-a-coordinator' | 'unauthorized' | 'not-found' | 'refused';

export class OperatorFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly kind: FailureKind,
  ) {
    super(message);
    this.name = 'OperatorFailure';
  }
}
