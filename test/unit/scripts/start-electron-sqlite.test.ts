// `npm start` builds the SQLite module for Electron before the first launch, launches straight away once it is
// there, and stops with the command to run when it cannot be built (rather than opening a window that fails);
// that command (`node scripts/electron-sqlite.mjs`) builds it by hand.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ELECTRON_VERSION, FakeCheckout, nodeBuild, repo } from './fake-checkout';

let checkout: FakeCheckout;
beforeEach(() => {
  checkout = new FakeCheckout();
  // dist/ as a build leaves it, with no sources newer: start.mjs goes straight to launching.
  for (const out of ['dist/main/cli.cjs', 'dist/main/electron-main.cjs', 'dist/main/preload.cjs']) checkout.write(out);
  for (const script of ['start.mjs', 'electron-sqlite.mjs']) {
    copyFileSync(path.join(repo, 'scripts', script), checkout.write(`scripts/${script}`));
  }
  checkout.fakeElectron();
});
afterEach(() => checkout.remove());

const electronArgs = (): string => checkout.path('electron-args.txt');

function runScript(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, args, {
    cwd: checkout.root,
    env: { PATH: process.env.PATH, HOME: checkout.root, FAKE_ELECTRON_OUT: electronArgs(), FAKE_TOOL_LOG: checkout.toolLog, FAKE_NODE_BUILD: nodeBuild, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}

const npmStart = (env: NodeJS.ProcessEnv = {}) => runScript([checkout.path('scripts/start.mjs'), '--cluster', 'lab.yaml'], env);

describe('npm start and the SQLite module for Electron', () => {
  it('builds it before the first launch, then launches without building again', { timeout: 30_000 }, async () => {
    const first = await npmStart({ FAKE_NODE_GYP_MAKES: '1' });
    expect(first.output).toContain(`Building the SQLite module for Electron ${ELECTRON_VERSION} (once, ~1 min; it has not been built yet)…`);
    expect(first.output).toContain(`Built ${path.relative(checkout.root, checkout.electronBuild())}.`);
    expect(first.code).toBe(3);
    expect(readFileSync(electronArgs(), 'utf8').split('\n').filter(Boolean)).toEqual([checkout.root, '--cluster', 'lab.yaml']);
    expect(existsSync(checkout.electronBuild())).toBe(true);

    const calls = checkout.toolCalls().length;
    const second = await npmStart();
    expect(second.output).not.toContain('Building the SQLite module');
    expect(second.code).toBe(3);
    expect(checkout.toolCalls()).toHaveLength(calls);
  });

  it('stops with the command to run when the build fails, without launching Electron', { timeout: 30_000 }, async () => {
    const { code, output } = await npmStart();
    expect(code).toBe(1);
    expect(output).toContain(`Could not build the SQLite module for Electron ${ELECTRON_VERSION} (see above).`);
    expect(output).toContain('Then run `node scripts/electron-sqlite.mjs` (or `npm start` again)');
    expect(output).toContain('`npm start -- --headless`');
    expect(existsSync(electronArgs())).toBe(false);
  });

  it('the command it names builds the module by hand, checked in Electron, and then says it is built', { timeout: 30_000 }, async () => {
    const manual = [checkout.path('scripts/electron-sqlite.mjs')];
    const refused = await runScript(manual, { FAKE_NODE_GYP_MAKES: '1', FAKE_ELECTRON_REFUSES: 'NODE_MODULE_VERSION mismatch' });
    expect(refused.code).toBe(1);
    expect(refused.output).toContain('Electron would not load the result: NODE_MODULE_VERSION mismatch');

    const built = await runScript(manual, { FAKE_NODE_GYP_MAKES: '1' });
    expect(built.output).toContain(`Built ${path.relative(checkout.root, checkout.electronBuild())}.`);
    expect(built.code).toBe(0);
    const again = await runScript(manual);
    expect(again.output).toContain('is already built (--force builds it again)');
    expect(again.code).toBe(0);
  });
});
