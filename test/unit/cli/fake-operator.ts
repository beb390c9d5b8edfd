/**
 * A coordinator's operator API faked by a real HTTP server on 127.0.0.1, for `gpu-share …` commands run
 * in-process (helpers.ts): the test gives the routes, this gives the environment that points the CLI at it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const OPERATOR_TOKEN = 'operator-token-operator-token-operator-to';

export type Send = (status: number, body: unknown) => void;

export interface FakeOperator {
  /** GPU_SHARE_URL, GPU_SHARE_OPERATOR_TOKEN and a GPU_SHARE_HOME of its own. */
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/** Serves `route(url, send)`; anything it does not answer is a 404 naming the path. */
export async function startFakeOperator(route: (url: URL, send: Send) => boolean | void): Promise<FakeOperator> {
  const home = mkdtempSync(path.join(tmpdir(), 'gpu-share-fake-operator-'));
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send: Send = (status, body) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (route(url, send) !== true) send(404, { error: `no endpoint ${url.pathname}` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    env: { GPU_SHARE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, GPU_SHARE_OPERATOR_TOKEN: OPERATOR_TOKEN, GPU_SHARE_HOME: home },
    async close() {
      await new Promise((r) => server.close(r));
      rmSync(home, { recursive: true, force: true });
    },
  };
}
