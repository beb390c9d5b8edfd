// Issue 17 defect 13: a file that is no cluster.yaml at all gets one message naming it; a .yaml keeps its own errors.
import { describe, expect, it } from 'vitest';
import { parseClusterYaml } from '../../../src-shared/cluster/parse';
import { notAClusterFile } from '../../../src-shared/cluster/sniff-file';

const PY = 'import torch\n\ndef main():\n    model = torch.nn.Linear(4, 2)\n    print(model)\n\nif __name__ == "__main__":\n    main()\n';
const CLUSTER = 'nodes:\n  - name: lab\n    host: lab.example\n    transport: ssh\n    max_adapters: 2\n';

describe('notAClusterFile', () => {
  it('names a Python script, a README and a binary file as neither a cluster.yaml nor a job manifest', () => {
    for (const [name, text] of [
      ['train.py', PY],
      ['README.md', '# GPU Share\n\nSome words: here.\n'],
      ['weights.zip', 'PK\u0003\u0004\u0000\u0000binary'],
    ] as const) {
      const issue = notAClusterFile(name, text);
      expect(issue?.message, name).toMatch(/^this is neither a cluster\.yaml nor a job manifest: /);
      expect(issue?.severity).toBe('error');
    }
    // Before, the script was read as YAML and answered with its YAML errors.
    expect(parseClusterYaml(PY).ok).toBe(false);
  });

  it('lets a cluster file through under any name, and any .yaml/.yml through to its own errors', () => {
    expect(notAClusterFile('cluster', CLUSTER)).toBeNull();
    expect(notAClusterFile('cluster.txt', CLUSTER)).toBeNull();
    expect(notAClusterFile('broken.yaml', PY)).toBeNull();
    expect(notAClusterFile('Cluster.YML', 'nodes: [')).toBeNull();
    expect(notAClusterFile('other.conf', 'workers:\n  - a\n')).not.toBeNull();
  });
});
