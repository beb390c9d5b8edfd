// The clear-text rule: plain http only to this machine's loopback, and a sentence that names the URL and says
// what to do instead for each place a coordinator URL is typed.
import { describe, expect, it } from 'vitest';
import { clearTextProblem } from '../../../src-shared/cluster/clear-text';

describe('clearTextProblem', () => {
  it('lets https anywhere and http to every spelling of loopback through', () => {
    for (const url of [
      'https://192.0.2.10:7421',
      'https://gpu.example',
      'http://127.0.0.1:7421',
      'http://127.8.9.10:1',
      'http://[::1]:7421',
      'http://[0:0:0:0:0:0:0:1]:7421',
      'http://localhost:7421',
    ]) {
      expect(clearTextProblem(url, 'worker'), url).toBeNull();
      expect(clearTextProblem(new URL(url), 'operator'), url).toBeNull();
    }
  });

  it('refuses http to any other host, naming the URL and what the worker should use', () => {
    for (const url of ['http://192.0.2.10:7421', 'http://10.0.0.1', 'http://[fe80::1]:7421', 'http://gpu.example:7421', 'http://0.0.0.0:7421', 'http://128.0.0.1']) {
      const problem = clearTextProblem(url, 'worker');
      expect(problem, url).toContain(new URL(url).origin);
      expect(problem, url).toMatch(/the join token would cross the network unencrypted; nothing was sent\. Use the https:\/\/ URL with --cert-sha256 from the coordinator's Add a worker panel/);
    }
  });

  it('tells an operator to run on the coordinator or tunnel over SSH to its port', () => {
    expect(clearTextProblem('http://10.0.0.1:7421', 'operator')).toBe(
      "http://10.0.0.1:7421 is plain http to a host other than this machine's loopback (127.0.0.1, ::1, localhost), so the operator token would cross the network unencrypted; nothing was sent. " +
        "Run the command on the coordinator's machine, or over an SSH tunnel: ssh -L 7421:127.0.0.1:7421 10.0.0.1, then --url http://127.0.0.1:7421 (or use its https:// URL with --cert-sha256).",
    );
  });

  it('tells the join panel to paste the https URL and fingerprint', () => {
    expect(clearTextProblem('http://192.168.1.20:7421', 'panel')).toMatch(/Use the https:\/\/ URL and its certificate fingerprint \(--cert-sha256\) from the other machine's Add a worker panel\.$/);
  });

  it('leaves text that is not a URL to the URL parser', () => {
    expect(clearTextProblem('not a url', 'worker')).toBeNull();
  });
});
