// Runs one TypeScript file (a benchmark, a helper process) under plain Node: esbuild bundles it to a
// temporary ES module next to it, with node_modules left external, then it is imported.
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [entry, ...rest] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/run-ts.mjs FILE.ts [args…]');
  process.exit(2);
}
const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-run-'));
const outfile = path.join(process.cwd(), `.run-ts-${process.pid}.mjs`);
try {
  await build({
    entryPoints: [path.resolve(entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    packages: 'external',
    logLevel: 'warning',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  process.argv = [process.argv[0], path.resolve(entry), ...rest];
  await import(pathToFileURL(outfile).href);
} finally {
  rmSync(outfile, { force: true });
  rmSync(dir, { recursive: true, force: true });
}
