/**
 * The node check: the script runs in a real sh here (this machine stands in for a node), and each missing
 * thing is named with the command that fixes it.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseFacts, preflightProblems, PREFLIGHT_SCRIPT, type RemoteFacts } from '../../../src-main/core/ssh/remote-preflight';

const ready: RemoteFacts = { home: '/home/ada', node: '/usr/bin/node', nodeVersion: '20.19.1', python: '/usr/bin/python3', torch: '2.3.0', setsid: '/usr/bin/setsid', freeMb: 50_000 };

describe('remote preflight', () => {
  it('the script reports this machine: node of this test, HOME, free disk', () => {
    const out = execFileSync('sh', ['-s'], { input: PREFLIGHT_SCRIPT, encoding: 'utf8', env: { PATH: `${process.execPath.replace(/\/node$/, '')}:/usr/bin:/bin`, HOME: '/tmp' } });
    const facts = parseFacts(out);
    expect(facts.home).toBe('/tmp');
    expect(facts.nodeVersion).toBe(process.versions.node);
    expect(facts.freeMb).toBeGreaterThan(0);
    expect(facts.setsid).toMatch(/setsid$/);
  });

  it('a ready node has no problems', () => {
    expect(preflightProblems(ready)).toEqual([]);
  });

  it('each missing thing is named with its fix', () => {
    const cases: [Partial<RemoteFacts>, RegExp, RegExp][] = [
      [{ node: '', nodeVersion: '' }, /Node\.js is not on the PATH/, /nodesource.*setup_20/],
      [{ nodeVersion: '18.19.0' }, /Node\.js 18\.19\.0 .* older than 20/, /apt-get install -y nodejs/],
      [{ python: '', torch: '' }, /Python 3 is not on the PATH/, /apt-get install python3 python3-torch/],
      [{ torch: '' }, /\/usr\/bin\/python3 cannot import torch/, /python3-torch.*pip install torch/],
      [{ setsid: '' }, /setsid is missing/, /util-linux/],
      [{ freeMb: 100 }, /only 100 MB free in \/home\/ada/, /free space/],
    ];
    for (const [facts, what, fix] of cases) {
      const problems = preflightProblems({ ...ready, ...facts });
      expect(problems).toHaveLength(1);
      expect(problems[0]!.what).toMatch(what);
      expect(problems[0]!.fix).toMatch(fix);
    }
  });

  it('everything missing at once is reported at once', () => {
    expect(preflightProblems({ home: '', node: '', nodeVersion: '', python: '', torch: '', setsid: '', freeMb: null })).toHaveLength(4);
  });
});
