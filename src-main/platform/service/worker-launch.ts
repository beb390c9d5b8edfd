/**
 * What an installed worker runs, independent of the service manager that runs it: one program with its
 * arguments, the environment it needs (never the join token: only the path of the owner-only file holding it),
 * its working folder, and where its output goes. The unit, plist and task generators each render this.
 */

/** The worker reads its join token from the file this names (run-worker.ts), so no service definition holds it. */
export const TOKEN_FILE_ENV = 'GPU_SHARE_JOIN_TOKEN_FILE';
/** The worker writes joining / joined / stopped here, for `gpu-share worker status`. */
export const STATUS_FILE_ENV = 'GPU_SHARE_WORKER_STATUS_FILE';

export interface WorkerLaunch {
  /** Absolute path of the program: Node.js (or the app's Electron binary run as Node). */
  executable: string;
  /** Its arguments: the CLI script, then `worker --join URL …`. */
  args: string[];
  /** Environment set by the definition itself (no secrets). */
  env: Record<string, string>;
  workingDir: string;
  /** The owner-only file with the token: an EnvironmentFile= on Linux, the bare token elsewhere. */
  tokenFile: string;
  /** Where stdout/stderr go when the manager does not keep them (macOS, Windows); null: the journal. */
  logFile: string | null;
  /** One line for the definition's description: which coordinator it joins, under which name. */
  description: string;
  /** The account a system-wide definition runs the worker as (Linux User=, macOS UserName); absent: the manager's default. */
  runAs?: string;
}

/** A value the generators refuse: a newline or another control character would break the definition's syntax. */
export function launchProblem(launch: WorkerLaunch): string | null {
  const values: [string, string][] = [
    ['the program path', launch.executable],
    ['the working folder', launch.workingDir],
    ['the token file path', launch.tokenFile],
    ['the description', launch.description],
    ...launch.args.map((a, i): [string, string] => [`argument ${i + 1}`, a]),
    ...Object.entries(launch.env).map(([k, v]): [string, string] => [`environment variable ${k}`, `${k}${v}`]),
  ];
  if (launch.logFile) values.push(['the log file path', launch.logFile]);
  if (launch.runAs !== undefined) values.push(['the account', launch.runAs]);
  for (const [what, value] of values) {
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(value)) return `${what} contains a control character (a newline?): ${JSON.stringify(value)}`;
  }
  for (const key of Object.keys(launch.env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return `environment variable name "${key}" is not a plain name`;
  }
  return null;
}
