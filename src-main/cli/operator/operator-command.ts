/**
 * What every operator command (`gpu-share runs …`, `gpu-share workers …`) shares: the connection options, their
 * help text, and one runner that connects, runs the command and turns a failure into its message and exit code
 * (with --json, also a JSON object on stdout, so a script never has to parse a sentence).
 */
import { CERT_ENV } from '../../platform/net/coordinator-url';
import type { CliIo } from '../command';
import { OperatorClient } from './operator-client';
import { OperatorFailure } from './operator-failure';
import { DEFAULT_COORDINATOR_URL, OPERATOR_TOKEN_ENV, resolveOperatorTarget, URL_ENV, type OperatorFlags } from './operator-target';

export const operatorOptions = {
  url: { type: 'string' },
  token: { type: 'string' },
  'cert-sha256': { type: 'string' },
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
} as const;

export const OPERATOR_OPTIONS_USAGE = `Connection (the local coordinator is found by itself):
  --json              print the coordinator's answer as JSON (stable; errors as {"error", "kind", "exitCode"})
  --data-dir DIR      data folder of the coordinator (as given to \`gpu-share serve --data-dir\`); its
                      coordinator.json says where it listens, its secrets.json holds the operator token
  --url URL           the coordinator's API instead (or ${URL_ENV}; default ${DEFAULT_COORDINATOR_URL});
                      http only on loopback: another machine's needs https:// and --cert-sha256, or an
                      SSH tunnel (ssh -L 7421:127.0.0.1:7421 HOST)
  --token TOKEN       operator token instead (better ${OPERATOR_TOKEN_ENV}: ps shows command lines)
  --cert-sha256 HEX   certificate fingerprint of an https coordinator (or ${CERT_ENV})

Exit status: 0 done, 1 refused by the coordinator, 2 bad usage, 3 no coordinator answers, 4 token refused,
5 no such run or worker.`;

export type OperatorValues = OperatorFlags & { json?: boolean | undefined };

/** Connects as `values` say and runs `body`; resolves with its exit code or the failure's. */
export async function runOperator(label: string, values: OperatorValues, io: CliIo, body: (client: OperatorClient) => Promise<number>): Promise<number> {
  let client: OperatorClient | null = null;
  try {
    client = new OperatorClient(await resolveOperatorTarget(values, io));
    return await body(client);
  } catch (error) {
    if (!(error instanceof OperatorFailure)) throw error;
    io.err(`${label}: ${error.message}\n`);
    if (values.json) io.out(`${JSON.stringify({ error: error.message, kind: error.kind, exitCode: error.exitCode }, null, 2)}\n`);
    return error.exitCode;
  } finally {
    client?.close();
  }
}

/** Prints `value` as the command's JSON answer. */
export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}
