import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// electron-builder's own validator, against the schema it ships (a full build cannot run offline).
const require = createRequire(import.meta.url);
const { validateConfiguration } = require('app-builder-lib/out/util/config/config.js') as {
  validateConfiguration(config: unknown, debugLogger: { isEnabled: boolean; add(key: string, value: unknown): void }): Promise<void>;
};
const quietLogger = { isEnabled: false, add: () => undefined };

const root = path.resolve(__dirname, '../../..');
interface BuilderConfig {
  appId: string;
  productName: string;
  files: string[];
  asarUnpack: string[];
  extraResources: { from: string; to: string }[];
  linux: { target: string[]; category: string; icon: string; maintainer: string };
  mac: { target: string; icon: string };
  win: { target: string; icon: string };
}
const config = parse(readFileSync(path.join(root, 'electron-builder.yml'), 'utf8')) as BuilderConfig;
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { main: string };

describe('electron-builder.yml', () => {
  // Loading the schema takes a few seconds on a small machine.
  it("matches electron-builder 26's schema", { timeout: 60_000 }, async () => {
    await expect(validateConfiguration(config, quietLogger)).resolves.toBeUndefined();
  });

  it('would be rejected with a misspelt option (the validator is really checking)', { timeout: 60_000 }, async () => {
    await expect(validateConfiguration({ ...config, linux: { ...config.linux, categroy: 'Development' } }, quietLogger)).rejects.toThrow(
      /configuration object that does not match the API schema/,
    );
  });

  it('packages what the shell loads at run time and keeps trainers, examples and the corpus as real files', () => {
    expect(config).toMatchObject({ productName: 'GPU Share', appId: expect.stringMatching(/^[a-z]+(\.[a-z-]+)+$/) });
    expect(config.files).toEqual(expect.arrayContaining(['dist/**', 'package.json', 'assets/**']));
    expect(pkg.main).toBe('dist/main/electron-main.cjs');
    expect(config.asarUnpack).toEqual(['**/node_modules/@lydell/node-pty*/**', '**/node_modules/better-sqlite3/**']);
    expect(config.extraResources).toEqual([
      { from: 'assets/trainers', to: 'assets/trainers' },
      { from: 'assets/launcher', to: 'assets/launcher' },
      { from: 'assets/examples', to: 'assets/examples' },
      { from: 'assets/corpus', to: 'assets/corpus' },
    ]);
    // Python reads the corpus next to the trainers: it must not be inside app.asar too.
    expect(config.files).toContain('!assets/corpus/**');
  });

  it('builds AppImage + deb, dmg and nsis, with icons that exist', () => {
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.linux.category).toBe('Development');
    expect(config.linux.maintainer).toMatch(/<[^@\s]+@[^>\s]+>/);
    expect(config.mac.target).toBe('dmg');
    expect(config.win.target).toBe('nsis');
    for (const size of [16, 32, 48, 64, 128, 256, 512, 1024]) {
      expect(existsSync(path.join(root, config.linux.icon, `${size}x${size}.png`)), `${size}x${size}.png`).toBe(true);
    }
    for (const icon of [config.mac.icon, config.win.icon]) expect(existsSync(path.join(root, icon)), icon).toBe(true);
  });

  it('has icons that are real PNGs of the size their names say', () => {
    for (const size of [16, 256, 1024]) {
      const png = readFileSync(path.join(root, 'assets/icons/png', `${size}x${size}.png`));
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([size, size]);
    }
  });
});
