// Issue 16's CLI surfaces: `workers links` (table, matrix, failed probes, --json as is, none yet says how to
// measure, --measure asks for a round now, wrong flags named), `runs start --comm/--local-sgd-period` (checked before anything is sent) and
// `runs show`'s comm, step and link-note lines. Served by a real HTTP server on 127.0.0.1.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../src-main/cli/command';
import { commLines } from '../../../src-main/cli/commands/runs/run-format';
import { runSpecFrom } from '../../../src-main/cli/commands/runs/run-spec-args';
import { formatLinks, formatRtt, NO_LINKS_TEXT } from '../../../src-main/cli/commands/workers/links-format';
import type { LinkMeasurement } from '../../../src-shared/links/link-matrix';
import { commDecisionSentence, commStatsText, formatBytes, readCommChoice } from '../../../src-shared/runs/comm-text';
import { runOf } from '../nodes/activity-fixtures';
import { cli } from './helpers';

const NOW = 1_700_000_000_000;
const OPERATOR = 'operator-token-operator-token-operator-to';
const link = (fromId: number, from: string, toId: number, to: string, mbps: number | null, rttMs: number | null, ago = 5000, error?: string): LinkMeasurement => ({
  fromId, toId, from, to, mbps, rttMs, measuredAt: NOW - ago, ...(error ? { error } : {}),
});
const LINKS = [
  link(1, 'alpha', 2, 'beta', 941.2, 0.31),
  link(2, 'beta', 1, 'alpha', 938, 0.3),
  link(1, 'alpha', 3, 'gamma', 19.64, 12.4, 65_000),
  link(3, 'gamma', 1, 'alpha', null, null, 2000, 'connection refused by 10.0.0.3:7421 (is its agent running?)'),
];

let links: LinkMeasurement[] = LINKS;
const posted: unknown[] = [];
const measures: unknown[] = [];
let server: http.Server;
let root: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'gpu-share-links-'));
  server = http.createServer((req, res) => {
    const send = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/v1/state') return send(200, { workers: [], runs: [], events: [], awaiting: [], links });
    if (req.method === 'POST' && req.url === '/v1/links/measure') {
      measures.push(req.url);
      return send(200, { links: [...LINKS, link(3, 'gamma', 2, 'beta', 95.2, 0.8, 0)] });
    }
    if (req.method === 'POST') posted.push(req.url);
    send(404, { error: `no endpoint ${req.url}` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  env = { GPU_SHARE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, GPU_SHARE_OPERATOR_TOKEN: OPERATOR, GPU_SHARE_HOME: root };
});

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  rmSync(root, { recursive: true, force: true });
});

describe('gpu-share workers links', () => {
  it('prints one row per link: from, to, bandwidth, RTT, age, source and a failed probe\'s reason', () => {
    const links = LINKS.map((l) => (l.from === 'beta' ? { ...l, source: 'training' as const } : l));
    const lines = formatLinks(links, NOW).split('\n');
    expect(lines[0]!.split(/\s{2,}/)).toEqual(['FROM', 'TO', 'BANDWIDTH', 'RTT', 'MEASURED', 'SOURCE', 'PROBLEM']);
    expect(lines.slice(1, 5).map((l) => l.split(/\s{2,}/))).toEqual([
      ['alpha', 'beta', '941 Mbit/s', '0.31 ms', '5 s ago', 'probe'],
      ['alpha', 'gamma', '19.6 Mbit/s', '12 ms', '1 min 5 s ago', 'probe'],
      ['beta', 'alpha', '938 Mbit/s', '0.30 ms', '5 s ago', 'training'],
      ['gamma', 'alpha', 'failed', '-', '2 s ago', 'probe', 'connection refused by 10.0.0.3:7421 (is its agent running?)'],
    ]);
  });

  it('adds a matrix for a few nodes: rows send, columns receive, ? where not measured', () => {
    const text = formatLinks(LINKS, NOW);
    expect(text).toContain('Bandwidth, sender (row) to receiver (column); ? = not measured:\n');
    const matrix = text.split('\n').slice(-5, -1).map((l) => l.trim().split(/\s{2,}/));
    expect(matrix).toEqual([
      ['FROM \\ TO', 'alpha', 'beta', 'gamma'],
      ['alpha', '·', '941 Mbit/s', '19.6 Mbit/s'],
      ['beta', '938 Mbit/s', '·', '?'],
      ['gamma', 'failed', '?', '·'],
    ]);
  });

  it('leaves the matrix out beyond 10 nodes (too wide) and keeps a hostile reason on one short line', () => {
    const many = Array.from({ length: 11 }, (_, i) => link(i + 1, `n${i + 1}`, ((i + 1) % 11) + 1, `n${((i + 1) % 11) + 1}`, 100, 1));
    expect(formatLinks(many, NOW)).not.toContain('FROM \\ TO');
    const long = formatLinks([link(1, 'a', 2, 'b', null, null, 0, `x\n${'y'.repeat(500)}`)], NOW).split('\n')[1]!;
    expect(long).toMatch(/ x y{97}…$/);
  });

  it('formats round-trip times to their useful precision', () => {
    expect([formatRtt(0.314), formatRtt(4.26), formatRtt(123.4), formatRtt(null)]).toEqual(['0.31 ms', '4.3 ms', '123 ms', '-']);
  });

  it('says none is measured yet and how to measure', async () => {
    links = [];
    const r = await cli(['workers', 'links'], env);
    links = LINKS;
    expect(r).toEqual({ code: 0, out: NO_LINKS_TEXT, err: '' });
    expect(NO_LINKS_TEXT).toContain('gpu-share workers links --measure');
  });

  it('prints the table from GET /v1/state, and --json the LinkMeasurement[] as is', async () => {
    const text = await cli(['workers', 'links'], env);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^alpha +gamma +19\.6 Mbit\/s +12 ms /m);
    const json = await cli(['workers', 'links', '--json'], env);
    expect(JSON.parse(json.out)).toEqual(LINKS);
  });

  it('--measure asks the coordinator to measure now (POST /v1/links/measure) and prints what it answers', async () => {
    const r = await cli(['workers', 'links', '--measure'], env);
    expect(r.code).toBe(0);
    expect(measures).toEqual(['/v1/links/measure']);
    expect(r.err).toMatch(/^Measuring every link among the active workers/);
    expect(r.out).toMatch(/^gamma +beta +95\.2 Mbit\/s +0\.80 ms +\d+ h \d+ min ago +probe$/m);
    const json = await cli(['workers', 'links', '--measure', '--json'], env);
    expect(json.err).toBe('');
    expect(JSON.parse(json.out)).toHaveLength(5);
  });

  it('refuses unknown flags and extra words with the usual usage errors (exit 2)', async () => {
    const flag = await cli(['workers', 'links', '--jsn'], env);
    expect(flag.code).toBe(2);
    expect(flag.err).toMatch(/unknown option --jsn.*--json/);
    const extra = await cli(['workers', 'links', 'alpha'], env);
    expect(extra.code).toBe(2);
    expect(extra.err).toMatch(/alpha/);
  });
});

describe('gpu-share runs start --comm', () => {
  it('sends comm and the period; without --comm nothing (the coordinator defaults to auto)', () => {
    expect(runSpecFrom({ samples: '10', comm: 'local-sgd', 'local-sgd-period': '8' }, ['t.py'], {})).toEqual({ command: ['t.py'], samples: 10, comm: 'local-sgd', localSgdPeriod: 8 });
    expect(runSpecFrom({ samples: '10', comm: 'fp16' }, ['t.py'], {})).toEqual({ command: ['t.py'], samples: 10, comm: 'fp16' });
    expect(runSpecFrom({ samples: '10' }, ['t.py'], {})).toEqual({ command: ['t.py'], samples: 10 });
    expect(runSpecFrom({ samples: '10', comm: 'powersgd', gpus: true }, ['t.py'], {})).toMatchObject({ comm: 'powersgd', useGpus: true });
  });

  it('names the allowed strategies, a period without local-sgd and a bad period; takes powersgd without --gpus', () => {
    const usage = (values: Parameters<typeof runSpecFrom>[0]) => () => runSpecFrom({ samples: '10', ...values }, ['t.py'], {});
    expect(usage({ comm: 'allreduce' })).toThrow(new UsageError('--comm: "allreduce" is not a communication strategy: choose auto, ddp, fp16, powersgd or local-sgd'));
    expect(usage({ 'local-sgd-period': '8' })).toThrow(/^--local-sgd-period: a local SGD period only applies to local-sgd \(the run uses auto\): drop --local-sgd-period or add --comm local-sgd$/);
    expect(usage({ comm: 'ddp', 'local-sgd-period': '8' })).toThrow(/the run uses ddp/);
    for (const bad of ['0', '1001', '2.5', 'often']) expect(usage({ comm: 'local-sgd', 'local-sgd-period': bad })).toThrow(/^--local-sgd-period: the local SGD period is a whole number of steps from 1 to 1000/);
    // A CPU run's powersgd is decided per generation from its members' torch (fp16 with the reason under torch 1.x).
    expect(usage({ comm: 'powersgd' })()).toMatchObject({ comm: 'powersgd' });
  });

  it('refuses a bad --comm through the CLI before anything is sent (exit 2)', async () => {
    const r = await cli(['runs', 'start', '--samples', '10', '--comm', 'fast', '--', 't.py'], env);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--comm: "fast" is not a communication strategy: choose auto, ddp, fp16, powersgd or local-sgd');
    expect(posted).toEqual([]);
  });
});

describe('gpu-share runs show: the communication lines', () => {
  const decided = runOf({
    spec: { ...runOf().spec, comm: 'auto' },
    comm: { requested: 'auto', strategy: 'local-sgd', localSgdPeriod: 8, reason: 'DDP would spend 87 % of a step communicating over alpha–gamma 19.6 Mbit/s; averaging every 8 steps spends 9 %', commShare: 0.09, generation: 2 },
    commStats: { gradBytes: 16_990_000, stepComputeS: 0.2112 },
    linkNote: 'alpha–gamma 19.6 Mbit/s, the others 940 Mbit/s',
  });

  it('prints the strategy, whether auto chose it and why, the trainer\'s step figures and the link note', () => {
    expect(commLines(decided)).toEqual([
      '  comm       local-sgd every 8 steps (auto): DDP would spend 87 % of a step communicating over alpha–gamma 19.6 Mbit/s; averaging every 8 steps spends 9 %',
      '  step       17.0 MB of gradients per step, 0.21 s compute',
      '  links      alpha–gamma 19.6 Mbit/s, the others 940 Mbit/s',
    ]);
  });

  it('lists auto\'s decisions once it changed its mind: time (UTC), generation, how, share and why; the first launch alone is not listed', () => {
    const at = Date.UTC(2026, 11, 7, 4, 31, 2);
    const launch = { at, generation: 1, strategy: 'ddp' as const, localSgdPeriod: null, how: 'launch' as const, reason: 'plain DDP spends 4.6 % of a step communicating', commShare: 0.046 };
    expect(commLines({ ...decided, commDecisions: [launch] })).toEqual(commLines(decided));
    const relaunch = { ...launch, at: at + 61_000, generation: 2, strategy: 'local-sgd' as const, localSgdPeriod: 109, how: 'relaunch' as const, reason: 'ddp spends 92.3 % of a step communicating, over 15.0 %', commShare: 0.0992 };
    const retune = { ...relaunch, at: at + 95_000, localSgdPeriod: 270, how: 'retune' as const, reason: 'slower still', commShare: 0.1 };
    expect(commLines({ ...decided, commDecisions: [launch, relaunch, retune] }).slice(3)).toEqual([
      '  decisions  oldest first (UTC):',
      '    04:31:02 generation 1 launched with ddp (4.6 % of a step communicating): plain DDP spends 4.6 % of a step communicating',
      '    04:32:03 generation 2 relaunched with local-sgd every 109 steps (9.9 % of a step communicating): ddp spends 92.3 % of a step communicating, over 15.0 %',
      '    04:32:37 generation 2 retuned in place to local-sgd every 270 steps (10.0 % of a step communicating): slower still',
    ]);
    const many = Array.from({ length: 15 }, (_, i) => ({ ...retune, at: at + i * 1000 }));
    expect(commLines({ ...decided, commDecisions: many })[3]).toBe('  decisions  the last 12 of 15, oldest first (UTC):');
  });

  it('before the first generation says what the run asked for', () => {
    expect(commLines(runOf({ spec: { ...runOf().spec, comm: 'local-sgd', localSgdPeriod: 16 } }))).toEqual(['  comm       local-sgd every 16 steps (decided when a generation starts)']);
    expect(commLines(runOf())).toEqual(['  comm       auto (decided when a generation starts)']);
    expect(commLines(runOf({ comm: { ...decided.comm!, requested: 'fp16', strategy: 'fp16', localSgdPeriod: null, reason: 'asked for' } }))).toEqual(['  comm       fp16 (asked for)']);
    const fallback = { ...decided.comm!, requested: 'powersgd' as const, strategy: 'fp16' as const, localSgdPeriod: null, reason: 'powersgd cannot run on gloo here: beta runs torch 1.13.1, whose gloo aborts on it (torch 2 or newer trains it on gloo); fp16 instead' };
    expect(commLines(runOf({ comm: fallback }))).toEqual([`  comm       fp16 (instead of powersgd): ${fallback.reason}`]);
    expect(commDecisionSentence(fallback)).toBe(`FP16 instead of PowerSGD: ${fallback.reason}`);
    expect(commDecisionSentence({ ...decided.comm!, requested: 'local-sgd', reason: 'asked for (its period asked for)' })).toBe('Local SGD every 8 steps — as asked');
  });

  it('words the run page\'s decision line and sizes in decimal units', () => {
    expect(commDecisionSentence(decided.comm!)).toBe('Local SGD every 8 steps — chosen automatically: DDP would spend 87 % of a step communicating over alpha–gamma 19.6 Mbit/s; averaging every 8 steps spends 9 %');
    expect([formatBytes(999), formatBytes(820_400), formatBytes(16_990_000), formatBytes(2.5e9)]).toEqual(['999 B', '820 kB', '17.0 MB', '2.5 GB']);
    expect(commStatsText({ gradBytes: 1e6, stepComputeS: 3.04 })).toBe('1.0 MB of gradients per step, 3.0 s compute');
    expect(commStatsText({ gradBytes: 5200, stepComputeS: 0.00421 })).toBe('5 kB of gradients per step, 4.2 ms compute');
    expect(commStatsText({ gradBytes: 5200, stepComputeS: 0.0421 })).toBe('5 kB of gradients per step, 42 ms compute');
    expect(readCommChoice('local-sgd', ' 12 ')).toEqual({ ok: true, comm: 'local-sgd', localSgdPeriod: 12 });
  });
});
