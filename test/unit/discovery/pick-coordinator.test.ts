import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src-main/cli/run-cli';
import { ignoredLine, pickCoordinator, provenOnly } from '../../../src-main/platform/discovery/pick-coordinator';
import type { DiscoveredCoordinator } from '../../../src-shared/nodes/ipc-discovery';

const heard = (name: string, last: number): DiscoveredCoordinator => ({ name, url: `https://10.0.0.${last}:7421`, certSha256: String(last).padStart(2, '0').repeat(32), seenAt: 1 });

describe('gpu-share worker --discover: picking the coordinator', () => {
  it('joins the one coordinator heard', () => {
    expect(pickCoordinator([heard('desk', 5)], undefined, 4000)).toEqual({ ok: true, coordinator: heard('desk', 5) });
  });

  it('none heard: exit 1 saying what to check, by cluster name', () => {
    const plain = pickCoordinator([], undefined, 4000);
    expect(plain).toMatchObject({ ok: false, exitCode: 1 });
    expect(!plain.ok && plain.message).toMatch(/no GPU Share coordinator without a cluster name answered on this network within 4 s.*--coordinator-host 0\.0\.0\.0.*--join URL --cert-sha256 HEX/);
    const named = pickCoordinator([], 'lab', 4000);
    expect(!named.ok && named.message).toMatch(/coordinator of cluster "lab".*same --cluster-name/);
  });

  it('several heard: exit 2 listing each with its URL and fingerprint', () => {
    const pick = pickCoordinator([heard('desk', 5), heard('lab', 6)], undefined, 4000);
    expect(pick).toMatchObject({ ok: false, exitCode: 2 });
    const message = !pick.ok ? pick.message : '';
    expect(message).toContain(`desk  https://10.0.0.5:7421  --cert-sha256 ${'05'.repeat(32)}`);
    expect(message).toContain('lab  https://10.0.0.6:7421');
    expect(message).toMatch(/--cluster-name/);
  });
});

describe('gpu-share worker --discover: command line', () => {
  const run = async (args: string[]) => {
    const err: string[] = [];
    const code = await runCli(['worker', ...args], { out: () => undefined, err: (t) => void err.push(t), env: { GPU_SHARE_JOIN_TOKEN: 't' }, cwd: '/' });
    return { code, err: err.join('') };
  };

  it('refuses --discover with --join, --cluster-name without --discover, and an unusable name (exit 2, before listening)', async () => {
    expect(await run(['--discover', '--join', 'http://127.0.0.1:1'])).toEqual({ code: 2, err: expect.stringMatching(/--discover and --join both name the coordinator/) });
    expect(await run(['--join', 'http://127.0.0.1:1', '--cluster-name', 'lab'])).toEqual({ code: 2, err: expect.stringMatching(/--cluster-name goes with --discover/) });
    expect(await run(['--discover', '--cluster-name', ' lab'])).toEqual({ code: 2, err: expect.stringMatching(/--cluster-name: the cluster name " lab" must be/) });
    expect(await run([])).toEqual({ code: 2, err: expect.stringMatching(/--join URL is required.*or --discover/) });
  });
});

describe('gpu-share worker --discover: only coordinators that prove the join token', () => {
  it('keeps those that prove it, and names each one that does not as ignored', async () => {
    const ignored: string[] = [];
    const genuine = heard('lab', 5);
    const rogue = heard('lab', 66);
    const proven = await provenOnly(
      [rogue, genuine],
      async (c) => (c === genuine ? { ok: true } : { ok: false, message: 'bad proof' }),
      (c) => ignored.push(ignoredLine(c)),
    );
    expect(proven).toEqual([genuine]);
    expect(ignored).toEqual([`heard lab at https://10.0.0.66:7421: could not prove it holds your cluster's join token — ignored`]);
    expect(pickCoordinator(proven, 'lab', 4000)).toEqual({ ok: true, coordinator: genuine });
  });

  it('a prover that throws counts as not proved', async () => {
    const proven = await provenOnly([heard('x', 7)], async () => Promise.reject(new Error('boom')), () => undefined);
    expect(proven).toEqual([]);
  });
});
