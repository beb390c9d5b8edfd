// Issue 16 in the page's store: the link map's matrix from the state (every live worker a row and a column, the
// newest measurement per ordered pair, unmeasured pairs kept as holes), its colour classes, the links event, and
// the run form's Communication field checked like the CLI (period only for Local SGD, PowerSGD only on GPUs).
import { describe, expect, it } from 'vitest';
import { events } from '../../../src-shared/ipc';
import type { LinkMeasurement } from '../../../src-shared/links/link-matrix';
import { eventHandlers } from '../../../src-renderer/bridge';
import { createAppStore } from '../../../src-renderer/store/app-store';
import { linkMapModel, linkSpeed } from '../../../src-renderer/features/nodes/links';
import { fieldsFromSpec, specFromFields } from '../../../src-renderer/features/runs/start/run-form';
import { workerSnapshot } from '../helpers/snapshots';

const link = (fromId: number, from: string, toId: number, to: string, mbps: number | null, measuredAt = 1000, error?: string): LinkMeasurement => ({
  fromId, toId, from, to, mbps, rttMs: mbps === null ? null : 0.5, measuredAt, ...(error ? { error } : {}),
});

describe('the link map model', () => {
  const workers = [workerSnapshot(2, { node: 'beta' }), workerSnapshot(1, { node: 'alpha' }), workerSnapshot(3, { node: 'gamma' }), workerSnapshot(4, { node: 'gone', state: 'left' })];

  it('has a row and a column per live worker in name order, the newest measurement per pair, and holes where none ran', () => {
    const m = linkMapModel(workers, [link(1, 'alpha', 2, 'beta', 900, 1000), link(1, 'alpha', 2, 'beta', 18.5, 2000), link(2, 'beta', 1, 'alpha', 940), link(3, 'gamma', 1, 'alpha', null, 1000, 'timed out')]);
    expect(m.nodes.map((n) => n.node)).toEqual(['alpha', 'beta', 'gamma']);
    expect(m.cells[0]![1]!.mbps).toBe(18.5);
    expect(m.cells[1]![0]!.mbps).toBe(940);
    expect(m.cells[0]![2]).toBeNull();
    expect(m.cells[2]![0]!.error).toBe('timed out');
    expect(m.cells.map((row, i) => row[i])).toEqual([null, null, null]);
    expect(m.measured).toBe(3);
  });

  it('keeps a node a link names even when its worker is not in the list (yet)', () => {
    expect(linkMapModel([], [link(7, 'delta', 8, 'eps', 100)]).nodes).toEqual([{ workerId: 7, node: 'delta' }, { workerId: 8, node: 'eps' }]);
  });

  it('colours by speed class, failed and unmeasured apart', () => {
    expect([linkSpeed(link(1, 'a', 2, 'b', 941)), linkSpeed(link(1, 'a', 2, 'b', 100)), linkSpeed(link(1, 'a', 2, 'b', 20)), linkSpeed(link(1, 'a', 2, 'b', 19.9)), linkSpeed(link(1, 'a', 2, 'b', null)), linkSpeed(null)]).toEqual(['fast', 'ok', 'slow', 'very-slow', 'failed', 'none']);
  });

  it('takes the links event into the store (the bridge handles every contract event, links included)', () => {
    const store = createAppStore();
    const handlers = eventHandlers(store);
    expect(Object.keys(events)).toContain('onLinks');
    handlers.onLinks([link(1, 'alpha', 2, 'beta', 900)]);
    expect(store.getState().links).toHaveLength(1);
  });
});

describe('the run form\'s Communication field', () => {
  const base = { name: 'mlp', command: ['t.py'], samples: 100 };
  const fields = fieldsFromSpec(base);

  it('starts at Auto and sends comm with the run; a period only for Local SGD', () => {
    expect(fields.comm).toBe('auto');
    expect(specFromFields(fields, base)).toMatchObject({ ok: true, spec: { comm: 'auto' } });
    const local = specFromFields({ ...fields, comm: 'local-sgd', localSgdPeriod: '8' }, base);
    expect(local).toMatchObject({ ok: true, spec: { comm: 'local-sgd', localSgdPeriod: 8 } });
    // A period typed, then the strategy changed: the hidden field is not sent, and the base's period is dropped.
    const ddp = specFromFields({ ...fields, comm: 'ddp', localSgdPeriod: '8' }, { ...base, comm: 'local-sgd', localSgdPeriod: 8 });
    expect(ddp.ok && ddp.spec).toEqual(expect.objectContaining({ comm: 'ddp' }));
    expect(ddp.ok && 'localSgdPeriod' in ddp.spec).toBe(false);
  });

  it('refills from a spec with its strategy and period (Run again)', () => {
    expect(fieldsFromSpec({ ...base, comm: 'local-sgd', localSgdPeriod: 16 })).toMatchObject({ comm: 'local-sgd', localSgdPeriod: '16' });
  });

  it('says what is wrong next to the field: a bad period; PowerSGD without GPUs is taken (decided per generation)', () => {
    const bad = specFromFields({ ...fields, comm: 'local-sgd', localSgdPeriod: '0' }, base);
    expect(bad).toEqual({ ok: false, errors: { localSgdPeriod: 'The local SGD period is a whole number of steps from 1 to 1000, got "0"' } });
    expect(specFromFields({ ...fields, comm: 'powersgd', useGpus: false }, base)).toMatchObject({ ok: true, spec: { comm: 'powersgd', useGpus: false } });
    expect(specFromFields({ ...fields, comm: 'powersgd', useGpus: true }, base)).toMatchObject({ ok: true, spec: { comm: 'powersgd', useGpus: true } });
  });
});
