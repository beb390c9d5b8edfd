/**
 * A checkout in a temporary folder for the start-script tests: the installed Electron and better-sqlite3 (its real
 * lib/ and sources, with this machine's Node build as the one `npm install` made), and stand-ins for what needs
 * the internet or a display: Electron's binary, prebuild-install and node-gyp. The stand-ins write what they were
 * asked (argv, cwd, environment) as JSON lines to FAKE_TOOL_LOG.
 */
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const repo = path.resolve(__dirname, '../../..');
export const ELECTRON_VERSION = '45.4.1';
export const nodeBuild = path.join(repo, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
const realSqlite = path.join(repo, 'node_modules/better-sqlite3');
export const SQLITE_VERSION = (JSON.parse(readFileSync(path.join(realSqlite, 'package.json'), 'utf8')) as { version: string }).version;

export interface ToolCall {
  tool: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

// Records the call; FAKE_<TOOL>_MAKES=1 makes it leave this machine's build where the real tool would.
const toolScript = (tool: string, makes: string): string => `
const fs = require('node:fs');
const path = require('node:path');
const call = { tool: ${JSON.stringify(tool)}, argv: process.argv.slice(2), cwd: process.cwd(), env: process.env };
fs.appendFileSync(process.env.FAKE_TOOL_LOG, JSON.stringify(call) + '\\n');
if (process.env.${makes} !== '1') process.exit(1);
fs.mkdirSync('build/Release', { recursive: true });
fs.copyFileSync(process.env.FAKE_NODE_BUILD, path.join('build/Release', 'better_sqlite3.node'));
`;

export class FakeCheckout {
  readonly root = mkdtempSync(path.join(os.tmpdir(), 'gpu-share-checkout-'));
  readonly toolLog = path.join(this.root, 'tool-calls.jsonl');

  constructor() {
    this.write('node_modules/electron/package.json', JSON.stringify({ name: 'electron', version: ELECTRON_VERSION }));
    const sqlite = this.path('node_modules/better-sqlite3');
    // deps/ (SQLite's 10 MB amalgamation) is left out: nothing here compiles it.
    cpSync(realSqlite, sqlite, { recursive: true, filter: (source) => !/[\\/](deps|build)$/.test(source) });
    mkdirSync(path.join(sqlite, 'build/Release'), { recursive: true });
    cpSync(nodeBuild, path.join(sqlite, 'build/Release/better_sqlite3.node'));
    this.write('node_modules/prebuild-install/package.json', JSON.stringify({ name: 'prebuild-install', version: '7.1.3' }));
    this.write('node_modules/prebuild-install/bin.js', toolScript('prebuild-install', 'FAKE_PREBUILT_MAKES'));
    this.write('node_modules/node-gyp/package.json', JSON.stringify({ name: 'node-gyp', version: '12.4.0' }));
    this.write('node_modules/node-gyp/bin/node-gyp.js', toolScript('node-gyp', 'FAKE_NODE_GYP_MAKES'));
  }

  path(relative: string): string {
    return path.join(this.root, relative);
  }

  write(relative: string, text: string | Buffer = ''): string {
    const full = this.path(relative);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, text);
    return full;
  }

  /** The Electron build's place for the installed versions on this machine. */
  electronBuild(electronVersion = ELECTRON_VERSION, sqliteVersion = SQLITE_VERSION): string {
    const folder = `better-sqlite3-${sqliteVersion}-electron-${electronVersion}-${process.platform}-${process.arch}`;
    return this.path(`node_modules/.cache/gpu-share/${folder}/better_sqlite3.node`);
  }

  /**
   * Electron's binary, where the electron package records it. Run as Node (ELECTRON_RUN_AS_NODE) it runs this
   * machine's Node, so loading the Node build in it succeeds; with FAKE_ELECTRON_REFUSES it fails as Electron does
   * on a module built for another ABI. As an app it records its arguments and exits 3.
   */
  fakeElectron(): string {
    this.write('node_modules/electron/path.txt', 'electron');
    const bin = this.write(
      'node_modules/electron/dist/electron',
      [
        '#!/bin/sh',
        'if [ "$ELECTRON_RUN_AS_NODE" = 1 ]; then',
        '  if [ -n "$FAKE_ELECTRON_REFUSES" ]; then echo "$FAKE_ELECTRON_REFUSES" >&2; exit 1; fi',
        `  exec "${process.execPath}" "$@"`,
        'fi',
        'printf "%s\\n" "$@" > "$FAKE_ELECTRON_OUT"',
        'exit 3',
        '',
      ].join('\n'),
    );
    chmodSync(bin, 0o755);
    return bin;
  }

  toolCalls(): ToolCall[] {
    let text = '';
    try {
      text = readFileSync(this.toolLog, 'utf8');
    } catch {
      return [];
    }
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ToolCall);
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}
