/**
 * A request the coordinator refuses, with the HTTP status the API answers and a message a person can act on.
 * The service throws it; the HTTP layer turns it into `{ error }` with that status; the app shows the message.
 */
export type ApiProblemStatus = 400 | 401 | 403 | 404 | 405 | 408 | 409 | 413 | 415 | 422 | 429 | 500 | 503;

export class ApiProblem extends Error {
  readonly status: ApiProblemStatus;
  /** For a 429 or 503: when to ask again (sent as the retry-after header). */
  readonly retryAfterS: number | undefined;

  constructor(status: ApiProblemStatus, message: string, retryAfterS?: number) {
    super(message);
    this.name = 'ApiProblem';
    this.status = status;
    this.retryAfterS = retryAfterS;
  }
}

export function isApiProblem(error: unknown): error is ApiProblem {
  return error instanceof ApiProblem;
}
