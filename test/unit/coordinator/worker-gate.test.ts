// The join gate on its own: what a connection shows, sessions, and name bindings that stay bounded.
import { describe, expect, it } from 'vitest';
import { connectionFacts, WorkerGate } from '../../../src-main/core/coordinator/membership/worker-gate';

const machine = (n: string) => `machine-${n}`.padEnd(24, '0');

describe('connectionFacts', () => {
  it('unwraps IPv4-mapped addresses and knows this machine', () => {
    expect(connectionFacts('::ffff:10.0.0.2', '::ffff:10.0.0.1')).toEqual({ seenFrom: '10.0.0.2', coordinatorAddr: '10.0.0.1', sameMachine: false });
    expect(connectionFacts('::1', '::1').sameMachine).toBe(true);
    expect(connectionFacts('127.0.0.5', '127.0.0.1').sameMachine).toBe(true);
    expect(connectionFacts('10.0.0.1', '10.0.0.1').sameMachine).toBe(true);
    expect(connectionFacts(undefined, undefined)).toEqual({ seenFrom: null, coordinatorAddr: null, sameMachine: false });
  });
});

describe('WorkerGate', () => {
  const remote = connectionFacts('10.0.0.2', '10.0.0.1');

  it('sessions: only the latest secret of a worker opens its requests', () => {
    const gate = new WorkerGate();
    const first = gate.openSession(3);
    expect(() => gate.checkSession(3, first, 'b')).not.toThrow();
    const second = gate.openSession(3);
    expect(() => gate.checkSession(3, first, 'b')).toThrow(/wrong session/);
    expect(() => gate.checkSession(3, second, 'b')).not.toThrow();
    expect(() => gate.checkSession(4, second, 'b')).toThrow(/wrong session/);
    expect(() => gate.checkSession(3, null, 'b')).toThrow(/missing session/);
  });

  it('trusts advertised hosts only when told to', () => {
    const strict = new WorkerGate();
    expect(() => strict.admit({ node: 'b', machineId: machine('b'), advertiseHost: '10.9.9.9', local: false }, remote)).toThrow(/advertises 10\.9\.9\.9 but connects from 10\.0\.0\.2/);
    expect(() => strict.admit({ node: 'b', machineId: machine('b'), advertiseHost: '10.0.0.2', local: false }, remote)).not.toThrow();
    const lax = new WorkerGate({ trustAdvertisedHosts: true });
    expect(() => lax.admit({ node: 'c', machineId: machine('c'), advertiseHost: '10.9.9.9', local: false }, remote)).not.toThrow();
  });

  it('keeps name bindings bounded, never forgetting a name in use', () => {
    const inUse = new Set(['keep']);
    const gate = new WorkerGate({ maxNames: 3, nameInUse: (n) => inUse.has(n) });
    const admit = (node: string, m = node) => gate.admit({ node, machineId: machine(m), advertiseHost: '10.0.0.2', local: false }, remote);
    admit('keep');
    for (const n of ['a', 'b', 'c', 'd']) admit(n);
    // 'keep' is still bound to its machine; the oldest unused ('a') was forgotten and may be taken.
    expect(() => admit('keep', 'other')).toThrow(/belongs to another machine/);
    expect(() => admit('a', 'other')).not.toThrow();
  });
});
