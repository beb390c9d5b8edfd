// Issue 25 item 6: the CLI pointed at what `gpu-share serve` prints for the browser. serve prints the API's exact
// --url for the CLI; the page's URL given as --url is refused before anything is sent, naming that --url (and
// never repeating the token); the page's port without the token answers the CLI with it instead of "Not found"
// (exit 5); the page token given as the operator token is named as such.
// After them, on the same serve, a run's tags and note (issue 25, "compare runs"): helpers/run-labels.ts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliServe } from './helpers/cli-serve';
import { describeRunLabels } from './helpers/run-labels';

let cli: CliServe;
let apiUrl: string;
let pageUrl: string;
let pageToken: string;
let elsewhere: string;

beforeAll(async () => {
  cli = await CliServe.start('gpu-share-cli-page');
  apiUrl = (JSON.parse(readFileSync(path.join(cli.home, 'coordinator.json'), 'utf8')) as { url: string }).url;
  pageUrl = /^GPU Share is running: (\S+)$/m.exec(cli.serveOut)![1]!;
  pageToken = (JSON.parse(readFileSync(path.join(cli.home, 'secrets.json'), 'utf8')) as { pageToken: string }).pageToken;
  elsewhere = mkdtempSync(path.join(tmpdir(), 'gpu-share-cli-page-elsewhere-'));
});

afterAll(async () => {
  // After the labels' restart of serve the folders are the restarted one's (closed in their afterAll).
  await cli?.close();
  if (elsewhere) rmSync(elsewhere, { recursive: true, force: true });
});

describe('the CLI and what serve prints', () => {
  it("prints the API's --url for the CLI, and which token it takes", () => {
    expect(pageUrl).toContain(`?token=${pageToken}`);
    expect(cli.serveOut).toMatch(/^CLI: gpu-share runs\|jobs\|workers on this machine find it by themselves; elsewhere \(an SSH tunnel\) give them --url (\S+) and the operator token/m);
    expect(/give them --url (\S+) and/.exec(cli.serveOut)![1]).toBe(apiUrl);
    expect(apiUrl).not.toBe(new URL(pageUrl).origin);
  });

  it('refuses the page URL as --url, naming the --url to use and not repeating the token', async () => {
    const r = await cli.gpuShare(['runs', 'list', '--url', pageUrl]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`--url: ${new URL(pageUrl).origin} is the page of \`gpu-share serve\`, for a browser, not the coordinator's API. Give the CLI --url ${apiUrl}, with the operator token`);
    expect(r.err).not.toContain(pageToken);
  });

  it('answers the CLI at the page port without the token with the --url to use, not "Not found"', async () => {
    const origin = new URL(pageUrl).origin;
    const r = await cli.gpuShare(['workers', 'list', '--url', origin, '--json']);
    expect(r.code).toBe(3);
    expect(r.err).toContain(`${origin} is the page of \`gpu-share serve\``);
    expect(r.err).toContain(`--url ${apiUrl}`);
    expect(r.err).not.toMatch(/Not found/i);
    expect(JSON.parse(r.out)).toMatchObject({ kind: 'not-a-coordinator', exitCode: 3 });
  });

  it('says the page token is the page token, on this machine before sending it, and elsewhere after the refusal', async () => {
    const here = await cli.gpuShare(['runs', 'list'], { GPU_SHARE_OPERATOR_TOKEN: pageToken });
    expect(here.code).toBe(4);
    expect(here.err).toMatch(/the token from GPU_SHARE_OPERATOR_TOKEN is the page token of `gpu-share serve` \(in .*secrets\.json\): the CLI needs the operator token/);
    const away = await cli.gpuShare(['runs', 'list', '--url', apiUrl], { GPU_SHARE_HOME: elsewhere, GPU_SHARE_OPERATOR_TOKEN: pageToken });
    expect(away.code).toBe(4);
    expect(away.err).toContain("the ?token= of the page's URL is the page token, which opens only the page");
  });

  it('works with the printed --url and the operator token', async () => {
    const r = await cli.gpuShare(['runs', 'list', '--url', apiUrl, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ runs: [] });
  });
});

describeRunLabels(() => cli);
