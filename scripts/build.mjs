// Builds every process: main-side bundles with esbuild (CommonJS, node_modules left external),
// the renderer with Vite. Run by `npm install` (prepare) so the CLI works straight away.
import { build } from 'esbuild';
import { existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const out = path.join(root, 'dist');
rmSync(out, { recursive: true, force: true });

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
};

const entries = [
  ['src-main/cli/main.ts', 'main/cli.cjs'],
  ['src-main/electron/electron-main.ts', 'main/electron-main.cjs'],
  ['src-main/electron/preload.ts', 'main/preload.cjs'],
  ['src-main/cli/agent-process.ts', 'main/agent-process.cjs'],
];
await Promise.all(
  entries
    .filter(([src]) => existsSync(path.join(root, src)))
    .map(([src, dest]) =>
      build({
        ...common,
        entryPoints: [path.join(root, src)],
        outfile: path.join(out, dest),
        // The preload runs sandboxed: only `electron` may stay external there.
        ...(src.endsWith('preload.ts') ? { packages: undefined, external: ['electron'] } : {}),
      }),
    ),
);

// The worker agent that SSH nodes get (src-main/core/ssh): one file with every dependency inside but node-pty
// (@lydell/node-pty), whose native module is not copied (the agent falls back to pipes without it).
await build({
  ...common,
  packages: undefined,
  external: ['@lydell/node-pty'],
  sourcemap: false,
  entryPoints: [path.join(root, 'src-main/cli/agent-process.ts')],
  outfile: path.join(out, 'agent/gpu-share-agent.cjs'),
});

if (existsSync(path.join(root, 'src-renderer/index.html'))) {
  const { build: viteBuild } = await import('vite');
  await viteBuild({ configFile: path.join(root, 'vite.config.ts'), logLevel: 'warn' });
}
console.log('built dist/');
