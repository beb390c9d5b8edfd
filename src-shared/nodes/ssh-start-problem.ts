/**
 * Why an ssh node cannot be started from here, in one wording whoever asks (issue 25, item 8): the node card after
 * Start said "loopback only" where `gpu-share nodes status` said "no SSH key" for the same machine, each naming one
 * of the two things to fix. Each cause comes with what to do, all of them at once.
 */

export interface SshStartFacts {
  node: string;
  /** user@host as SSH logs in. */
  login: string;
  /** The coordinator listens on loopback only: no other machine could join it. */
  loopbackOnly: boolean;
  /** No SSH agent and no key file: nothing to log in with. */
  noKey: boolean;
}

/** The sentence, or null when neither stands in the way. */
export function sshStartProblem(f: SshStartFacts): string | null {
  const causes: string[] = [];
  if (f.loopbackOnly) causes.push(`this coordinator listens on loopback only, so ${f.node} could not join it: start GPU Share with --coordinator-host 0.0.0.0 (or this machine's LAN address)`);
  if (f.noKey) causes.push(`there is no SSH key to log in to ${f.login} (no SSH agent, no ~/.ssh/id_ed25519, id_ecdsa or id_rsa): make one with \`ssh-keygen -t ed25519\` and install it with \`ssh-copy-id ${f.login}\``);
  return causes.length > 0 ? causes.join('; and ') : null;
}
