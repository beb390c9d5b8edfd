/**
 * Where the CLI (`gpu-share runs|jobs|workers`) reaches `gpu-share serve`, in the words serve prints, the page
 * port answers when the CLI is pointed at it, and the CLI says when it is given the page's URL or token (issue
 * 25 item 6): the page (port 7420, `?token=` the page token) is for a browser; the CLI talks to the coordinator's
 * API (port 7421) with the operator token. One text, so the three can never disagree.
 */

/** The variable the CLI reads the operator token from. */
export const OPERATOR_TOKEN_ENV = 'GPU_SHARE_OPERATOR_TOKEN';

/** Which token the CLI needs, and which one it does not. */
export const OPERATOR_TOKEN_WORDS =
  `the operator token (operatorToken in the data folder's secrets.json, or ${OPERATOR_TOKEN_ENV}), not the page token: the ?token= of the page's URL opens only the page`;

/** The `--url` the CLI should be given, as a command-line fragment (with --cert-sha256 for an https API). */
export function cliUrlFlags(apiUrl: string, certSha256: string | null): string {
  return `--url ${apiUrl}${certSha256 ? ` --cert-sha256 ${certSha256}` : ''}`;
}

/** The line `gpu-share serve` prints about the CLI. `dataDirFlag` is `--data-dir DIR` when serve's is not the default. */
export function serveCliLine(apiUrl: string, certSha256: string | null, dataDirFlag: string | null): string {
  const here = dataDirFlag ? `with ${dataDirFlag}` : 'by themselves';
  return `CLI: gpu-share runs|jobs|workers on this machine find it ${here}; elsewhere (an SSH tunnel) give them ${cliUrlFlags(apiUrl, certSha256)} and ${OPERATOR_TOKEN_WORDS}`;
}

/** What the page port answers to an API path, and what the CLI says when given the page's URL. */
export function pageIsNotTheApi(pageOrigin: string, apiUrl: string | null, certSha256: string | null = null): string {
  const where = apiUrl ? cliUrlFlags(apiUrl, certSha256) : '--url with the address `gpu-share serve` prints after "CLI:"';
  return (
    `${pageOrigin} is the page of \`gpu-share serve\`, for a browser, not the coordinator's API. Give the CLI ${where}, ` +
    `with ${OPERATOR_TOKEN_WORDS}; on the machine that runs serve, leave --url out and the CLI finds it by itself.`
  );
}
