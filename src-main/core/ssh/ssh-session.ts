/**
 * One SSH connection to a declared node, over ssh2: keys from the SSH agent or ~/.ssh/id_ed25519, id_ecdsa,
 * id_rsa; the host key checked against known_hosts before anything is sent. Every failure is an SshError with a
 * kind the launcher acts on and a sentence that says what to do.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { Client, type ClientChannel, type SFTPWrapper } from 'ssh2';
import { addKnownHost, checkHostKey, readKnownHosts } from './known-hosts';

export type SshErrorKind = 'unknown-host-key' | 'changed-host-key' | 'no-key' | 'auth' | 'connect';

export class SshError extends Error {
  constructor(
    readonly kind: SshErrorKind,
    message: string,
    /** The presented key's fingerprint, for host-key errors. */
    readonly fingerprint?: string,
  ) {
    super(message);
    this.name = 'SshError';
  }
}

export interface SshTarget {
  host: string;
  port?: number;
  user: string;
  /** Folder with known_hosts and the id_* keys (default ~/.ssh). */
  sshDir?: string;
  /** The SSH agent's socket (default: SSH_AUTH_SOCK of `env`). */
  agentSocket?: string;
  env?: NodeJS.ProcessEnv;
  /** A fingerprint the person has accepted for this host: recorded in known_hosts when the server presents it. */
  acceptFingerprint?: string;
  /** A ready stream to the server instead of a TCP connection (like OpenSSH's ProxyCommand). */
  sock?: Duplex;
  timeoutMs?: number;
}

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

const KEY_FILES = ['id_ed25519', 'id_ecdsa', 'id_rsa'];

type AuthMethod = { type: 'agent'; username: string; agent: string } | { type: 'publickey'; username: string; key: Buffer };

async function authMethods(target: SshTarget, sshDir: string): Promise<{ methods: AuthMethod[]; tried: string[] }> {
  const methods: AuthMethod[] = [];
  const tried: string[] = [];
  const agent = target.agentSocket ?? target.env?.SSH_AUTH_SOCK;
  if (agent) {
    methods.push({ type: 'agent', username: target.user, agent });
    tried.push(`the SSH agent (${agent})`);
  }
  for (const name of KEY_FILES) {
    const file = path.join(sshDir, name);
    const key = await readFile(file).catch(() => null);
    if (!key) continue;
    methods.push({ type: 'publickey', username: target.user, key });
    tried.push(file);
  }
  return { methods, tried };
}

/** True when there is nothing to log in with: no SSH agent and none of the key files (checked before connecting). */
export async function sshKeyMissing(target: Pick<SshTarget, 'user' | 'sshDir' | 'agentSocket' | 'env'>): Promise<boolean> {
  const { methods } = await authMethods({ host: '', ...target }, target.sshDir ?? path.join(os.homedir(), '.ssh'));
  return methods.length === 0;
}

export class SshSession {
  private constructor(private readonly client: Client, readonly label: string) {}

  static async open(target: SshTarget): Promise<SshSession> {
    const port = target.port ?? 22;
    const sshDir = target.sshDir ?? path.join(os.homedir(), '.ssh');
    const knownHostsFile = path.join(sshDir, 'known_hosts');
    const label = `${target.user}@${target.host}${port === 22 ? '' : `:${port}`}`;
    const { methods, tried } = await authMethods(target, sshDir);
    if (methods.length === 0) {
      throw new SshError('no-key', `no SSH key to log in to ${label}: no SSH agent (SSH_AUTH_SOCK) and none of ${KEY_FILES.map((k) => path.join(sshDir, k)).join(', ')}. Make one with \`ssh-keygen -t ed25519\` and install it with \`ssh-copy-id ${label}\`.`);
    }
    const knownText = await readKnownHosts(knownHostsFile);
    const client = new Client();
    let hostKeyError: SshError | null = null;
    return new Promise<SshSession>((resolve, reject) => {
      const fail = (error: Error) => {
        client.end();
        reject(error);
      };
      client.once('ready', () => resolve(new SshSession(client, label)));
      client.once('error', (error: Error & { level?: string }) => {
        if (hostKeyError) return fail(hostKeyError);
        if (error.level === 'client-authentication') {
          return fail(new SshError('auth', `${label} refused every key (tried ${tried.join(', ')}): check the node's user in cluster.yaml, and install a key there with \`ssh-copy-id ${label}\`.`));
        }
        fail(new SshError('connect', `cannot connect to ${label}: ${error.message}`));
      });
      let next = 0;
      client.connect({
        host: target.host,
        port,
        username: target.user,
        ...(target.sock ? { sock: target.sock } : {}),
        readyTimeout: target.timeoutMs ?? 20_000,
        hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => {
          const verdict = checkHostKey(knownText, target.host, port, key);
          if (verdict.status === 'known') return verify(true);
          if (verdict.status === 'unknown' && target.acceptFingerprint === verdict.fingerprint) {
            // Recorded before logging in, as OpenSSH does: the key is the host's whether or not the login works.
            addKnownHost(knownHostsFile, target.host, port, key).then(
              () => verify(true),
              (error: Error) => {
                hostKeyError = new SshError('connect', `cannot record the host key of ${label} in ${knownHostsFile}: ${error.message}`);
                verify(false);
              },
            );
            return;
          }
          hostKeyError = hostKeyProblem(verdict, label, knownHostsFile, target.host, port);
          verify(false);
        },
        authHandler: (_left: unknown, _partial: unknown, callback: (m: AuthMethod | false) => void) => callback(methods[next++] ?? false),
      } as Parameters<Client['connect']>[0]);
    });
  }

  /** Runs a command to its end; stdin, when given, is written and closed (how secrets travel, never argv). */
  exec(command: string, opts: { stdin?: string; timeoutMs?: number } = {}): Promise<ExecResult> {
    return new Promise((resolve, reject) => {
      this.client.exec(command, (error, channel) => {
        if (error) return reject(error);
        let stdout = '';
        let stderr = '';
        const timer = opts.timeoutMs ? setTimeout(() => channel.close(), opts.timeoutMs) : null;
        channel.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
        channel.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
        channel.on('close', (code: number | null) => {
          if (timer) clearTimeout(timer);
          resolve({ code: code ?? -1, stdout, stderr });
        });
        channel.end(opts.stdin ?? '');
      });
    });
  }

  /** Starts a command whose output is streamed as it comes; close() ends the channel. */
  stream(command: string, onData: (text: string) => void): Promise<ClientChannel> {
    return new Promise((resolve, reject) => {
      this.client.exec(command, (error, channel) => {
        if (error) return reject(error);
        channel.on('data', (d: Buffer) => onData(d.toString('utf8')));
        channel.stderr.on('data', (d: Buffer) => onData(d.toString('utf8')));
        channel.end();
        resolve(channel);
      });
    });
  }

  sftp(): Promise<SFTPWrapper> {
    return new Promise((resolve, reject) => this.client.sftp((error, sftp) => (error ? reject(error) : resolve(sftp))));
  }

  close(): void {
    this.client.end();
  }
}

/** The refusal of a host key that is not the known one; `label` names the node (user@host). Exported for its test. */
export function hostKeyProblem(verdict: Exclude<ReturnType<typeof checkHostKey>, { status: 'known' }>, label: string, file: string, host: string, port: number): SshError {
  const where = port === 22 ? host : `[${host}]:${port}`;
  switch (verdict.status) {
    case 'unknown':
      return new SshError('unknown-host-key', `${label} is not in ${file} yet. Its ${verdict.keyType} key fingerprint is ${verdict.fingerprint}: accept it only if it is the fingerprint the machine shows (\`ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub\` there).`, verdict.fingerprint);
    case 'changed': {
      // A key of another type than the known one is named as such: it is what an interceptor without the host's
      // key offers, hoping to be taken for a new host (known-hosts.ts).
      const what =
        verdict.knownKeyType === verdict.keyType
          ? `${file} line ${verdict.line} has another ${verdict.keyType} key; it now presents ${verdict.fingerprint}`
          : `${file} line ${verdict.line} has an ${verdict.knownKeyType} key for ${where}, it presented ${verdict.keyType} (${verdict.fingerprint}) instead`;
      return new SshError('changed-host-key', `WARNING: THE HOST KEY OF ${label} HAS CHANGED (${what}). Someone could be intercepting the connection, so GPU Share did not connect. If the machine was really reinstalled, remove the old key with \`ssh-keygen -R ${where} -f ${file}\` and start again.`, verdict.fingerprint);
    }
    case 'revoked':
      return new SshError('changed-host-key', `the host key of ${label} (${verdict.fingerprint}) is marked @revoked in ${file} line ${verdict.line}; GPU Share did not connect.`, verdict.fingerprint);
  }
}
