// The jobs slice: onJobs replaces the state, the commands call the contract through the real WebSocket client
// against a `ws` server on 127.0.0.1, and refusals land in the page's banner or the manifest panel.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { createWsClient, type SocketLike } from '../../../src-renderer/api/ws-client';
import { focusTarget } from '../../../src-renderer/store/actions';
import { apply, createAppStore } from '../../../src-renderer/store/app-store';
import { jobsPagePosition, MAX_MANIFEST_FILE_BYTES, setJobs, toggleJobExpanded } from '../../../src-renderer/features/jobs/jobs-slice';
import { createJobCommands, jobEventHandlers, loadJobs } from '../../../src-renderer/features/jobs/jobs-commands';
import type { JobSnapshot, JobsState } from '../../../src-shared/jobs/types';

const id = (c: string) => c.repeat(64);

function job(over: Partial<JobSnapshot> = {}): JobSnapshot {
  const spec = { name: 'r8', command: ['train.py'], model: 'tiny', mode: 'lora', hyper: {}, seed: 1, requireCuda: false, preferCuda: true, minVramGib: 4, minRamGib: 0, minCores: 0, allowedHosts: null, maxAttempts: 3, dataMb: null, mflops: null };
  return {
    id: id('a'), name: 'r8', spec, status: 'pending', attempts: 0, maxAttempts: 3, node: null, workerId: null, gpuIndex: null, heldVramMb: 0, reason: null, progress: null,
    artifact: null, measuredPeakMb: null, overBudget: false, inManifest: true, createdAt: 1, updatedAt: 1, startedAt: null, finishedAt: null, ...over,
  };
}

function jobsState(jobs: JobSnapshot[]): JobsState {
  const count = (s: string) => jobs.filter((j) => j.status === s).length;
  return {
    jobs, ledger: [], previews: [], placement: 'binpack', manifestName: 'sweep.toml',
    counts: { total: jobs.length, pending: count('pending'), claimed: count('claimed'), running: count('running'), completed: count('completed'), failed: count('failed'), cancelled: count('cancelled') },
  };
}

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

type Answer = { result: unknown } | { error: string };

/** A server answering each method from `answers` (a function gets the argument); calls are recorded. */
async function setup(answers: Record<string, Answer | ((arg: unknown) => Answer)>) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const calls: { method: string; arg: unknown }[] = [];
  let socket: WebSocket | null = null;
  wss.on('connection', (ws) => {
    socket = ws;
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { id: number; method: string; arg: unknown };
      calls.push({ method: msg.method, arg: msg.arg });
      const found = answers[msg.method];
      const answer = typeof found === 'function' ? found(msg.arg) : (found ?? { error: `no handler for ${msg.method}` });
      ws.send(JSON.stringify('error' in answer ? { id: msg.id, ok: false, error: answer.error } : { id: msg.id, ok: true, result: answer.result }));
    });
  });
  const { api, connection } = createWsClient({
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws?token=t`,
    createSocket: (u) => new WebSocket(u) as unknown as SocketLike,
  });
  const store = createAppStore();
  cleanups.push(
    () => new Promise<void>((r) => wss.close(() => r())),
    () => {
      for (const c of wss.clients) c.terminate();
    },
    () => connection.close(),
  );
  const unsubscribe = api.onJobs(jobEventHandlers(store).onJobs);
  cleanups.push(unsubscribe);
  return { api, store, calls, commands: createJobCommands(api, store), push: (state: JobsState) => socket!.send(JSON.stringify({ event: 'onJobs', payload: state })) };
}

async function until(fn: () => boolean, what: string): Promise<void> {
  const started = Date.now();
  while (!fn()) {
    if (Date.now() - started > 5000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const file = (name: string, text: string, size = Buffer.byteLength(text)) => ({ name, size, text: async () => text });

describe('jobs slice', () => {
  it('loads the queue and the artifacts, then each onJobs replaces the state', async () => {
    const first = jobsState([job()]);
    const { api, store, push } = await setup({ getJobs: { result: first }, getArtifacts: { result: [{ sha256: id('1'), sizeBytes: 10, createdAt: 1, producedBy: [] }, { sha256: id('2'), sizeBytes: 20, createdAt: 5, producedBy: [] }] } });
    await loadJobs(api, store);
    expect(store.getState().jobs.state?.jobs.map((j) => j.status)).toEqual(['pending']);
    expect(store.getState().jobs.artifacts?.map((a) => a.sha256)).toEqual([id('2'), id('1')]);
    push(jobsState([job({ status: 'running', node: 'desk', gpuIndex: 0, attempts: 1 }), job({ id: id('b'), name: 'r16' })]));
    await until(() => store.getState().jobs.state?.jobs.length === 2, 'the pushed state');
    expect(store.getState().jobs.state?.counts.running).toBe(1);
  });

  it('says why the jobs could not load without failing anything else', async () => {
    const { api, store } = await setup({ getJobs: { error: 'jobs: no job service' }, getArtifacts: { result: [] } });
    await loadJobs(api, store);
    expect(store.getState().jobs.loadError).toBe('Could not load the jobs: jobs: no job service');
    expect(store.getState().loadError).toBeNull();
  });

  it('submits a manifest, says what it did and fetches the queue again', async () => {
    const { store, calls, commands } = await setup({
      submitManifest: (arg) => ({ result: { ok: true, fileName: (arg as { fileName: string }).fileName, added: [id('a'), id('b')], kept: [], missing: [] } }),
      getJobs: { result: jobsState([job(), job({ id: id('b'), name: 'r16' })]) },
    });
    await commands.submitManifestFile(file('sweep.toml', '[[jobs]]\nname = "r8"\n'));
    expect(calls.map((c) => c.method)).toEqual(['submitManifest', 'getJobs']);
    expect(calls[0]!.arg).toEqual({ fileName: 'sweep.toml', text: '[[jobs]]\nname = "r8"\n' });
    expect(store.getState().jobs.notice).toBe('Submitted sweep.toml: 2 new jobs, 0 kept.');
    expect(store.getState().jobs.state?.jobs).toHaveLength(2);
    expect(store.getState().busy).toEqual([]);
  });

  it('lists every error of a refused manifest and leaves the queue as it was', async () => {
    const errors = [
      { message: 'min_vram_gib must be a number', line: 4, col: 16, path: ['jobs', 0, 'min_vram_gib'] },
      { message: 'command is missing', line: 6, col: 1, path: ['jobs', 1] },
    ];
    const { store, calls, commands } = await setup({ submitManifest: { result: { ok: false, fileName: 'bad.toml', errors } } });
    apply(store, setJobs, jobsState([job()]));
    await commands.submitManifestFile(file('bad.toml', 'x'));
    expect(store.getState().jobs.manifestProblem).toEqual({ fileName: 'bad.toml', errors });
    expect(store.getState().jobs.state?.jobs).toHaveLength(1);
    expect(calls.map((c) => c.method)).toEqual(['submitManifest']);
  });

  it('refuses a manifest over the cap without sending it', async () => {
    const { store, calls, commands } = await setup({});
    await commands.submitManifestFile(file('huge.toml', '', MAX_MANIFEST_FILE_BYTES + 1));
    expect(calls).toEqual([]);
    expect(store.getState().jobs.manifestProblem?.errors[0]?.message).toMatch(/^the file is 4\.0 MiB; a manifest must be at most 4 MiB/);
  });

  it('cancels and requeues through the API, adopting the state each answers', async () => {
    const { store, calls, commands } = await setup({
      cancelJob: { result: jobsState([job({ status: 'cancelled', reason: 'cancelled by operator' })]) },
      requeueJob: { result: jobsState([job({ status: 'pending' })]) },
    });
    apply(store, setJobs, jobsState([job({ status: 'running' })]));
    await commands.cancelJob(id('a'));
    expect(store.getState().jobs.state?.jobs[0]?.reason).toBe('cancelled by operator');
    await commands.requeueJob(id('a'));
    expect(store.getState().jobs.state?.jobs[0]?.status).toBe('pending');
    expect(calls).toEqual([
      { method: 'cancelJob', arg: { jobId: id('a') } },
      { method: 'requeueJob', arg: { jobId: id('a') } },
    ]);
  });

  it('puts a refused action in the page banner and keeps the state', async () => {
    const { store, commands } = await setup({ cancelJob: { error: 'cancelJob: no job ' + id('f') } });
    apply(store, setJobs, jobsState([job({ status: 'running' })]));
    await commands.cancelJob(id('f'));
    expect(store.getState().actionError).toBe(`Could not cancel the job: cancelJob: no job ${id('f')}`);
    expect(store.getState().jobs.state?.jobs[0]?.status).toBe('running');
    expect(store.getState().busy).toEqual([]);
  });

  it('fetches a job output on demand and an artifact as bytes', async () => {
    const bytes = Buffer.from([0x1f, 0x8b, 0, 255, 10]);
    const { store, commands } = await setup({
      getJobOutput: (arg) => ({ result: { jobId: (arg as { jobId: string }).jobId, text: 'step 1 loss 0.5\n' } }),
      getArtifact: { result: { fileName: 'r8.tar.gz', base64: bytes.toString('base64') } },
      setPlacementPolicy: { result: { policy: 'spread' } },
      getJobs: { result: { ...jobsState([]), placement: 'spread' } },
    });
    await commands.loadJobOutput(id('a'));
    expect(store.getState().jobs.output[id('a')]).toBe('step 1 loss 0.5\n');
    expect(Buffer.from((await commands.fetchArtifact(id('c')))!)).toEqual(bytes);
    await commands.setPlacementPolicy('spread');
    expect(store.getState().jobs.state?.placement).toBe('spread');
  });

  it('closes rows of jobs that are gone, and opens the row a notification points at', () => {
    const store = createAppStore();
    apply(store, setJobs, jobsState([job(), job({ id: id('b') })]));
    apply(store, toggleJobExpanded, id('a'));
    apply(store, toggleJobExpanded, id('b'));
    apply(store, setJobs, jobsState([job({ id: id('b') })]));
    expect(store.getState().jobs.expanded).toEqual([id('b')]);
    apply(store, focusTarget, { view: 'jobs', jobId: id('c') });
    expect(store.getState().view).toBe('jobs');
    expect(store.getState().jobs.expanded).toEqual([id('b'), id('c')]);
  });

  it('shows a long queue a page at a time: where the page sits, Next and Previous ask the core for that page', async () => {
    const page = (offset: number): JobsState => ({
      ...jobsState(Array.from({ length: offset >= 10_000 ? 0 : 200 }, (_, i) => job({ id: (offset + i).toString(16).padStart(64, '0'), name: `j${offset + i}` }))),
      counts: { total: 10_050, pending: 10_050, claimed: 0, running: 0, completed: 0, failed: 0, cancelled: 0 },
      page: { offset, limit: 200, status: null, matching: 10_050 },
    });
    const { api, store, calls, commands } = await setup({
      getJobs: (arg) => ({ result: page((arg as { offset: number }).offset) }),
      getArtifacts: { result: [] },
    });
    apply(store, setJobs, page(0));
    expect(jobsPagePosition(store.getState().jobs.state!)).toEqual({ text: '1–200 of 10,050 jobs', previous: false, next: true });
    await commands.turnPage(1);
    await commands.turnPage(1);
    expect(calls.filter((c) => c.method === 'getJobs').map((c) => c.arg)).toEqual([
      { offset: 200, limit: 200, status: null },
      { offset: 400, limit: 200, status: null },
    ]);
    expect(jobsPagePosition(store.getState().jobs.state!)).toEqual({ text: '401–600 of 10,050 jobs', previous: true, next: true });
    // Opening the view again reloads the page it shows, not the first.
    await loadJobs(api, store);
    expect(calls.at(-2)).toEqual({ method: 'getJobs', arg: { offset: 400, limit: 200, status: null } });
    await commands.turnPage(-1);
    expect(store.getState().jobs.state!.jobs[0]!.name).toBe('j200');
    // A queue that fits one page has no pager; an old core's state (no page) neither.
    expect(jobsPagePosition(jobsState([job()]))).toBeNull();
    expect(jobsPagePosition({ ...page(0), jobs: [job()], page: { offset: 0, limit: 200, status: null, matching: 1 } })).toBeNull();
  });
});
