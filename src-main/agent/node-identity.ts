/**
 * The node's identity: an Ed25519 key pair made on first run and kept in the agent's data folder as `node-key`
 * (PKCS8 PEM, owner-only). The coordinator pins its public key at the first join and wants every later request
 * signed by it (request-signer.ts). The file also records which machine made it: a data folder copied to another
 * machine (a backup restored, a home directory synced) must not make two machines one node, so a key whose
 * machine binding differs from this machine's is refused instead of used. A symbolic link at `node-key` is
 * refused too (named): never read (a key of someone else's choosing) nor written through.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readPrivateFileSync, tightenToOwnerOnly, writePrivateFileSync } from '../platform/files/private-file';
import { SymlinkRefusedError } from '../platform/files/refuse-symlink';

export const NODE_KEY_FILE = 'node-key';
const WHAT = "this machine's node key";

const BINDING_LINE = /^machine-binding: ([A-Za-z0-9_-]{43})$/m;
const MACHINE_LINE = /^machine-name: (.{1,255})$/m;
const PEM_BLOCK = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/;

export interface NodeIdentity {
  /** Raw 32-byte Ed25519 public key, base64url: what the join sends as `publicKey`. */
  publicKey: string;
  /** SHA256:<base64> of the raw public key, as OpenSSH shows keys; what the Workers view shows. */
  fingerprint: string;
  /** Ed25519 signature of `data`, base64url. */
  sign(data: string | Buffer): string;
}

/** What this machine is, for the key's binding: a stable id of the OS install, and a name for messages. */
export interface MachineIdentitySource {
  id(): string;
  name(): string;
}

/** /etc/machine-id, else D-Bus's copy, else the host name with the network cards' MAC addresses. */
export const osMachineIdentity: MachineIdentitySource = {
  id() {
    for (const file of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
      try {
        const id = readFileSync(file, 'utf8').trim();
        if (id) return id;
      } catch {
        // Not there (macOS, Windows, a minimal container): try the next source.
      }
    }
    const macs = Object.values(os.networkInterfaces())
      .flat()
      .filter((i) => i && !i.internal && i.mac !== '00:00:00:00:00:00')
      .map((i) => i!.mac);
    return `${os.hostname()}|${[...new Set(macs)].sort().join(',')}`;
  },
  name: () => os.hostname(),
};

/** The error a key made on another machine is refused with. */
export class NodeKeyMovedError extends Error {
  constructor(
    readonly file: string,
    readonly madeOn: string,
  ) {
    super(
      `this data folder was copied from another machine: its node key (${file}) belongs to ${madeOn}. ` +
        `Move the folder back, or delete ${file} to make this machine a new node.`,
    );
    this.name = 'NodeKeyMovedError';
  }
}

/** SHA256:<base64 without padding> of a raw public key given in base64url. */
export function keyFingerprint(publicKeyBase64url: string): string {
  return `SHA256:${createHash('sha256').update(Buffer.from(publicKeyBase64url, 'base64url')).digest('base64').replace(/=+$/, '')}`;
}

function bindingOf(machineId: string): string {
  return createHash('sha256').update(`gpu-share node-key binding\n${machineId}`, 'utf8').digest('base64url');
}

function identityFrom(privateKey: KeyObject): NodeIdentity {
  const publicKey = String(createPublicKey(privateKey).export({ format: 'jwk' }).x);
  return { publicKey, fingerprint: keyFingerprint(publicKey), sign: (data) => sign(null, Buffer.isBuffer(data) ? data : Buffer.from(data, 'utf8'), privateKey).toString('base64url') };
}

/**
 * The node key kept in `dataDir`, made (atomically, 0600) when there is none. Throws NodeKeyMovedError when the
 * key was made on another machine, and an error naming the file when it cannot be read as a node key.
 */
export function loadOrCreateNodeIdentity(dataDir: string, machine: MachineIdentitySource = osMachineIdentity): NodeIdentity {
  const file = path.join(dataDir, NODE_KEY_FILE);
  let text: string | null;
  try {
    text = readPrivateFileSync(file, WHAT);
  } catch (error) {
    if (error instanceof SymlinkRefusedError) throw error;
    throw new Error(`cannot read the node key ${file}: ${(error as Error).message}`);
  }
  const binding = bindingOf(machine.id());
  if (text === null) return createNodeKey(file, binding, machine.name());
  const kept = BINDING_LINE.exec(text)?.[1];
  const pem = PEM_BLOCK.exec(text)?.[0];
  if (!kept || !pem) throw new Error(`${file} is not a GPU Share node key (no machine binding or no private key); delete it to make a new one`);
  if (kept !== binding) throw new NodeKeyMovedError(file, MACHINE_LINE.exec(text)?.[1]?.trim() || 'another machine');
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (error) {
    throw new Error(`${file} holds no readable private key (${(error as Error).message}); delete it to make a new one`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${file} holds a ${key.asymmetricKeyType} key, not Ed25519; delete it to make a new one`);
  tightenToOwnerOnly(file, WHAT); // someone made it readable to others: close it again (false: not ours to change)
  return identityFrom(key);
}

function createNodeKey(file: string, binding: string, machineName: string): NodeIdentity {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const name = machineName.replace(/[\r\n]+/g, ' ').slice(0, 255) || 'an unnamed machine';
  writePrivateFileSync(file, `machine-binding: ${binding}\nmachine-name: ${name}\n${pem}`, WHAT);
  return identityFrom(privateKey);
}
