/**
 * The checks `gpu-share worker install` makes before it installs a service: this machine's (Python with torch,
 * nvidia-smi, disk, from platform/service/) and the coordinator's proof that it holds the join token (agent/),
 * the same two the SSH start makes of a node. The CLI reaches agent/ only through app/, so the pair is put
 * together here.
 */
import { proveCoordinator } from '../agent/coordinator-proof';
import { gatherMachineFacts, machineProblems, type MachineProblem } from '../platform/service/machine-check';

export interface CheckInput {
  env: NodeJS.ProcessEnv;
  dataDir: string;
  coordinator: string;
  certSha256?: string;
  token: string;
}

export interface CheckOutcome {
  problems: MachineProblem[];
  /** The Python with torch found: pinned in the service's environment. */
  python: string | null;
}

/** The machine's checks and the coordinator's proof of the join token, as the SSH start checks a node. */
export async function checkWorkerMachine(input: CheckInput): Promise<CheckOutcome> {
  const [facts, proof] = await Promise.all([
    gatherMachineFacts(input.env, input.dataDir),
    proveCoordinator({ url: input.coordinator, token: input.token, timeoutMs: 10_000, ...(input.certSha256 ? { certSha256: input.certSha256 } : {}) }),
  ]);
  const problems = machineProblems(facts, input.env);
  if (!proof.ok) problems.push({ what: `the coordinator at ${input.coordinator} did not answer as your cluster's coordinator (${proof.message})`, fix: 'check the URL and --cert-sha256, and copy the install command again from the app\'s "Add a worker" panel' });
  return { problems, python: facts.python?.path ?? null };
}
