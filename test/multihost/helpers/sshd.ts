/**
 * A real OpenSSH server inside a namespace host, for the SSH launcher's tests: its own host key, config and
 * authorized_keys in a throwaway folder, HOME (and optionally PATH) of every login pointed into that folder by
 * SetEnv, so nothing of the machine's ~/.ssh or home is read or written. The client side gets a throwaway key
 * folder of its own (known_hosts included), and reaches the server through a relay process on another host
 * (like OpenSSH's ProxyCommand), since the test process itself is not in any host's namespace.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Duplex } from 'node:stream';
import { build } from 'esbuild';
import { hostKeyFingerprint } from '../../../src-main/core/ssh/known-hosts';
import type { AgentBundle } from '../../../src-main/core/ssh/remote-install';
import type { Host } from './hosts';
import type { HostProcess } from './host-process';
import { assetsDir, repoRoot } from './paths';

export interface Sshd {
  proc: HostProcess;
  port: number;
  /** The server's host key as a wire blob, and its SHA256: fingerprint. */
  hostKey: Buffer;
  fingerprint: string;
  /** HOME of every login. */
  home: string;
}

function keygen(file: string): void {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'gpu-share-test', '-f', file], { stdio: 'ignore' });
}

/** A public key file's wire blob (the base64 field). */
export function publicKeyBlob(pubFile: string): Buffer {
  return Buffer.from(readFileSync(pubFile, 'utf8').trim().split(/\s+/)[1]!, 'base64');
}

/** A client key folder like ~/.ssh: id_ed25519, and an empty known_hosts. */
export function makeClientSshDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  keygen(path.join(dir, 'id_ed25519'));
  writeFileSync(path.join(dir, 'known_hosts'), '', { mode: 0o600 });
  return dir;
}

/** A PATH folder with every program of /usr/bin and /bin except those matching `without` (to hide python). */
export function pathWithout(dir: string, without: RegExp): string {
  mkdirSync(dir, { recursive: true });
  for (const bin of ['/usr/bin', '/bin']) {
    for (const name of readdirSync(bin)) {
      if (without.test(name)) continue;
      try {
        symlinkSync(path.join(bin, name), path.join(dir, name));
      } catch {
        // The same name in both folders (a merged /usr): the first one stays.
      }
    }
  }
  return dir;
}

export async function startSshd(host: Host, dir: string, opts: { port?: number; authorizedKeys: string[]; path?: string; hostKey?: string }): Promise<Sshd> {
  const port = opts.port ?? 22;
  const home = path.join(dir, 'home');
  mkdirSync(home, { recursive: true, mode: 0o700 });
  // sshd refuses to start without its privilege separation folder (made by the package's service, not here).
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const hostKey = opts.hostKey ?? path.join(dir, 'ssh_host_ed25519_key');
  if (!opts.hostKey) keygen(hostKey);
  writeFileSync(path.join(dir, 'authorized_keys'), opts.authorizedKeys.map((f) => readFileSync(f, 'utf8')).join(''), { mode: 0o600 });
  const config = [
    `Port ${port}`,
    `ListenAddress ${host.address}`,
    `HostKey ${hostKey}`,
    `PidFile ${path.join(dir, `sshd-${port}.pid`)}`,
    `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
    'StrictModes no',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UsePAM no',
    'PermitRootLogin prohibit-password',
    'AllowUsers root',
    `SetEnv HOME=${home}${opts.path ? ` PATH=${opts.path}` : ''}`,
    'Subsystem sftp internal-sftp',
    'LogLevel VERBOSE',
  ].join('\n');
  const configFile = path.join(dir, `sshd_config-${port}`);
  writeFileSync(configFile, `${config}\n`);
  const proc = host.spawn(['/usr/sbin/sshd', '-D', '-e', '-f', configFile], { label: `${host.name}:sshd:${port}` });
  await proc.waitForLine(/Server listening on/, 15_000);
  const blob = publicKeyBlob(`${hostKey}.pub`);
  return { proc, port, hostKey: blob, fingerprint: hostKeyFingerprint(blob), home };
}

/** A stream to `address:port` opened from inside `via` (a relay process there, like ProxyCommand). */
export function sockVia(via: Host, address: string, port: number): Promise<Duplex> {
  const script = `const s=require('net').connect(${port},${JSON.stringify(address)});s.on('error',e=>{console.error(e.message);process.exit(1)});process.stdin.pipe(s);s.pipe(process.stdout);s.on('close',()=>process.exit(0))`;
  const [cmd, ...args] = via.wrap([process.execPath, '-e', script]);
  const child = spawn(cmd!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const sock = Duplex.from({ readable: child.stdout, writable: child.stdin });
  // The relay ending is the connection ending: ssh2 reports that itself.
  sock.on('error', () => undefined);
  sock.on('close', () => child.kill());
  return Promise.resolve(sock);
}

/** The self-contained agent, bundled the way scripts/build.mjs bundles dist/agent/gpu-share-agent.cjs. */
export async function bundleShippedAgent(outDir: string): Promise<AgentBundle> {
  const file = path.join(outDir, 'gpu-share-agent.cjs');
  await build({
    entryPoints: [path.join(repoRoot, 'src-main/cli/agent-process.ts')],
    outfile: file,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['node-pty'],
    logLevel: 'warning',
  });
  return { file, assetsDir, version: `test-${process.pid}` };
}
