// The refusal of a changed host key names what changed: a key of another type than the known one says both types
// (known_hosts has an ssh-ed25519 key, the host presented ssh-rsa), a same-type change keeps its sentence.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkHostKey, hostKeyFingerprint } from '../../../src-main/core/ssh/known-hosts';
import { hostKeyProblem } from '../../../src-main/core/ssh/ssh-session';

/** An SSH wire-format key blob: the type as an SSH string, then random bytes (only the type and the bytes matter here). */
function blob(type: string): Buffer {
  const field = (b: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length, 0);
    return Buffer.concat([len, b]);
  };
  return Buffer.concat([field(Buffer.from(type, 'latin1')), field(randomBytes(32))]);
}

const FILE = '/home/jo/.ssh/known_hosts';
const known = blob('ssh-ed25519');
const knownHosts = `# jo's hosts\ngpu-box ssh-ed25519 ${known.toString('base64')}\n`;

function refusal(presented: Buffer, port = 22) {
  const verdict = checkHostKey(port === 22 ? knownHosts : knownHosts.replace('gpu-box', `[gpu-box]:${port}`), 'gpu-box', port, presented);
  if (verdict.status === 'known') throw new Error('expected a refusal');
  return hostKeyProblem(verdict, 'jo@gpu-box', FILE, 'gpu-box', port);
}

describe('hostKeyProblem', () => {
  it('names both types when the host presents a key of another type than the known one (one type: as before)', () => {
    const rsa = blob('ssh-rsa');
    const error = refusal(rsa);
    expect(error.kind).toBe('changed-host-key');
    expect(error.fingerprint).toBe(hostKeyFingerprint(rsa));
    expect(error.message).toContain(`${FILE} line 2 has an ssh-ed25519 key for gpu-box, it presented ssh-rsa (${hostKeyFingerprint(rsa)}) instead`);
    expect(error.message).not.toContain('another ssh-rsa key');
    expect(error.message).toContain(`ssh-keygen -R gpu-box -f ${FILE}`);

    // A same-type change keeps its sentence.
    const other = blob('ssh-ed25519');
    expect(refusal(other).message).toContain(`${FILE} line 2 has another ssh-ed25519 key; it now presents ${hostKeyFingerprint(other)}`);
  });

  it('writes the host as [host]:port for another port', () => {
    const error = refusal(blob('ecdsa-sha2-nistp256'), 2222);
    expect(error.message).toContain('has an ssh-ed25519 key for [gpu-box]:2222, it presented ecdsa-sha2-nistp256');
    expect(error.message).toContain(`ssh-keygen -R [gpu-box]:2222 -f ${FILE}`);
  });
});
