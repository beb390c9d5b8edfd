/**
 * Issue 25, "compare runs": a run's tags and note through `gpu-share runs tag` / `runs note` and POST
 * /v1/runs/{id}/labels against a real `gpu-share serve` on loopback. Wrong input is refused naming the limit (the
 * CLI before sending, exit 2; the coordinator with a 400, exit 1), and the labels survive serve restarting: serve
 * is stopped (SIGTERM) and started again on the same data folder. Registered by cli-page-url.test.ts on its serve
 * (a file of its own paid a vitest fork and a serve start), after that file's cases, which expect no run yet.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSnapshot } from '../../../src-shared/training';
import type { CliServe } from './cli-serve';

/** The API as another client calls it (quicker than a CLI process per call); the operator token from secrets.json. */
async function api(c: CliServe, method: 'GET' | 'POST', route: string, body?: unknown): Promise<{ status: number; json: RunSnapshot & { error?: string } }> {
  const { url } = JSON.parse(readFileSync(path.join(c.home, 'coordinator.json'), 'utf8')) as { url: string };
  const { operatorToken } = JSON.parse(readFileSync(path.join(c.home, 'secrets.json'), 'utf8')) as { operatorToken: string };
  const res = await fetch(`${url}${route}`, {
    method,
    headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as RunSnapshot & { error?: string } };
}

/** The labels cases on the file's serve (`served()`, started by the file): a run of their own, serve restarted last. */
export function describeRunLabels(served: () => CliServe): void {
  let cli: CliServe;
  let again: CliServe | null = null;
  let runId: string;

  const labels = (body: unknown) => api(cli, 'POST', `/v1/runs/${encodeURIComponent(runId)}/labels`, body);

  describe('tags and a note per run, from the CLI and the API', () => {
    // Inside the describe: the run is made after the file's cases before, which expect none.
    beforeAll(async () => {
      cli = served();
      const spec = { name: 'labelled', command: ['/bin/true'], samples: 1, minWorkers: 1, maxWorkers: 1, launcher: 'direct' };
      const started = await api(cli, 'POST', '/v1/runs', spec);
      expect(started.status, started.json.error).toBe(201);
      runId = started.json.id;
    });

    afterAll(async () => {
      // The restarted serve owns the folders from then on; the file's close() of the first one only ends it if it runs.
      await again?.close();
    });

    it('adds, removes and shows tags and the note', async () => {
      const tagged = await cli.gpuShare(['runs', 'tag', runId, 'lr-3e-4', 'baseline', 'lr-3e-4']);
      expect(tagged).toMatchObject({ code: 0, out: `Run ${runId} (labelled): tags lr-3e-4, baseline\n` });
      expect(await cli.json<RunSnapshot>(['runs', 'tag', runId, 'baseline', '--remove'])).toMatchObject({ id: runId, tags: ['lr-3e-4'] });
      const noted = await cli.json<RunSnapshot>(['runs', 'note', runId, 'first try: lr 3e-4, no warm-up']);
      expect(noted).toMatchObject({ tags: ['lr-3e-4'], note: 'first try: lr 3e-4, no warm-up' });
      const shown = await cli.gpuShare(['runs', 'show', runId]);
      expect(shown.out).toMatch(/^ {2}tags {7}lr-3e-4$/m);
      expect(shown.out).toMatch(/^ {2}note {7}first try: lr 3e-4, no warm-up$/m);
    });

    it('refuses a bad tag, a long note and a 17th tag, naming the limit', async () => {
      const bad = await cli.gpuShare(['runs', 'tag', runId, 'two words']);
      expect(bad.code).toBe(2);
      expect(bad.err).toContain('tag "two words" has characters a tag cannot have: use letters, digits, ".", "_" and "-" only');
      const fifteen = Array.from({ length: 15 }, (_, i) => `t${i}`);
      expect((await labels({ addTags: fifteen })).json.tags).toHaveLength(16);
      const over = await cli.gpuShare(['runs', 'tag', runId, 'one-too-many']);
      expect(over.code).toBe(1);
      expect(over.err).toContain('a run has at most 16 tags: this would give it 17');
      // The API itself, as another client would call it: a 400 naming the limit, nothing changed.
      expect(await labels({ addTags: ['x'.repeat(33)] })).toMatchObject({ status: 400, json: { error: expect.stringContaining('is 33 characters: a tag has at most 32') } });
      expect(await labels({ note: 'x'.repeat(2001) })).toMatchObject({ status: 400, json: { error: "the note is 2001 characters: a run's note has at most 2000" } });
      expect(await labels({ removeTags: fifteen })).toMatchObject({ status: 200, json: { tags: ['lr-3e-4'], note: 'first try: lr 3e-4, no warm-up' } });
    });

    it('keeps them across a restart of serve', async () => {
      again = await cli.restarted();
      expect((await api(again, 'GET', `/v1/runs/${encodeURIComponent(runId)}`)).json).toMatchObject({ id: runId, tags: ['lr-3e-4'], note: 'first try: lr 3e-4, no warm-up' });
    });
  });
}
