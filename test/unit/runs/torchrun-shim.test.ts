/**
 * The launcher shim against torch-shaped stand-ins of the places torch 2.x takes this node's address from
 * (no torch 2.x here: the real torch 1.13 runs in test/integration/torchrun-shim-hosts.test.ts). Each
 * stand-in reports what it would publish, so the test sees which address torch would hand the ranks.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launcherShimPath } from '../../../src-main/platform/runs/torchrun-command';

// Module bodies shaped like torch 2.5's: where the agent, the store info and the node name read the address.
const FAKE_TORCH: Record<string, string> = {
  '__init__.py': '__version__ = "2.5.1+fake"\n',
  'distributed/__init__.py': '',
  'distributed/elastic/__init__.py': '',
  'distributed/elastic/agent/__init__.py': '',
  'distributed/elastic/agent/server/__init__.py': '',
  'distributed/elastic/agent/server/api.py': 'import socket\n\ndef _get_fq_hostname():\n    return socket.getfqdn(socket.gethostname())\n',
  'distributed/elastic/rendezvous/__init__.py': '',
  'distributed/elastic/rendezvous/api.py': 'import socket\n\ndef store_addr(local_addr=None):\n    return local_addr or socket.getfqdn()\n',
  'distributed/elastic/rendezvous/dynamic_rendezvous.py': 'import socket\n\ndef node_addr(local_addr=None):\n    return local_addr or socket.getfqdn()\n',
  'distributed/run.py': `import argparse, json, os, sys

def get_args_parser():
    p = argparse.ArgumentParser()
    p.add_argument("--nnodes")
    if not os.environ.get("FAKE_TORCH_24"):
        # torch's env action: the default comes from PET_LOCAL_ADDR
        p.add_argument("--local-addr", "--local_addr", default=os.environ.get("PET_LOCAL_ADDR"))
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p

def main(args=None):
    a = get_args_parser().parse_args(args)
    from torch.distributed.elastic.agent.server import api as agent
    from torch.distributed.elastic.rendezvous import api as rdzv, dynamic_rendezvous as dyn
    local = getattr(a, "local_addr", None)
    print(json.dumps({"argv": args, "local_addr": local, "agent": agent._get_fq_hostname(),
                      "store": rdzv.store_addr(local), "node": dyn.node_addr(local),
                      "other_name": rdzv.socket.getfqdn("localhost"), "script": a.training_script}))
`,
};

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), 'gpu-share-fake-torch-'));
  for (const [file, body] of Object.entries(FAKE_TORCH)) {
    mkdirSync(path.dirname(path.join(root, 'torch', file)), { recursive: true });
    writeFileSync(path.join(root, 'torch', file), body);
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Seen {
  argv: string[];
  local_addr: string | null;
  agent: string;
  store: string;
  node: string;
  other_name: string;
  script: string;
}

function runShim(env: Record<string, string>, args = ['--nnodes=2', 'train.py', '--lr', '1']): { seen: Seen; stderr: string } {
  const r = spawnSync('python3', [launcherShimPath(), ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONPATH: root, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return { seen: JSON.parse(r.stdout) as Seen, stderr: r.stderr };
}

describe('torchrun_shim.py', () => {
  it('torch 2.5-shaped: passes --local_addr and every place torch reads the address says the advertised one', () => {
    const { seen, stderr } = runShim({ GPU_SHARE_LOCAL_ADDR: '10.77.0.1' });
    expect(seen.argv).toEqual(['--local_addr=10.77.0.1', '--nnodes=2', 'train.py', '--lr', '1']);
    expect([seen.local_addr, seen.agent, seen.store, seen.node]).toEqual(['10.77.0.1', '10.77.0.1', '10.77.0.1', '10.77.0.1']);
    expect(seen.script).toBe('train.py');
    expect(stderr).toContain('gpu-share launcher: torch 2.5.1+fake: this node advertises 10.77.0.1');
  });

  it('torch 2.4-shaped (no --local_addr, socket.getfqdn() in the store info): patched, argv untouched', () => {
    const { seen } = runShim({ GPU_SHARE_LOCAL_ADDR: '192.168.1.21', FAKE_TORCH_24: '1' });
    expect(seen.argv).toEqual(['--nnodes=2', 'train.py', '--lr', '1']);
    expect([seen.agent, seen.store, seen.node]).toEqual(['192.168.1.21', '192.168.1.21', '192.168.1.21']);
  });

  it('only this machine\'s own name is replaced: a lookup of another name stays real', () => {
    const { seen } = runShim({ GPU_SHARE_LOCAL_ADDR: '10.77.0.1' });
    expect(seen.other_name).not.toBe('10.77.0.1');
  });

  it('an address the user gave torch (flag or PET_LOCAL_ADDR) is kept', () => {
    const flag = runShim({ GPU_SHARE_LOCAL_ADDR: '10.77.0.1' }, ['--local-addr=10.9.9.9', 'train.py']).seen;
    expect(flag.argv).toEqual(['--local-addr=10.9.9.9', 'train.py']);
    expect(flag.store).toBe('10.9.9.9');
    const pet = runShim({ GPU_SHARE_LOCAL_ADDR: '10.77.0.1', PET_LOCAL_ADDR: '10.9.9.9' }, ['train.py']).seen;
    expect(pet.argv).toEqual(['train.py']);
    expect(pet.store).toBe('10.9.9.9');
    // The script's own --local_addr is the script's, not the launcher's.
    expect(runShim({ GPU_SHARE_LOCAL_ADDR: '10.77.0.1' }, ['train.py', '--local_addr=x']).seen.local_addr).toBe('10.77.0.1');
  });

  it('a bracketed IPv6 address is published bare', () => {
    expect(runShim({ GPU_SHARE_LOCAL_ADDR: '[fd00::5]' }).seen.store).toBe('fd00::5');
  });

  it('without GPU_SHARE_LOCAL_ADDR it changes nothing and says so', () => {
    const { seen, stderr } = runShim({});
    expect(seen.argv).toEqual(['--nnodes=2', 'train.py', '--lr', '1']);
    expect(seen.local_addr).toBeNull();
    expect(seen.agent).not.toBe('');
    expect(seen.store).toBe(seen.agent);
    expect(stderr).toContain('GPU_SHARE_LOCAL_ADDR is not set');
    expect(hostname()).not.toBe('');
  });
});
