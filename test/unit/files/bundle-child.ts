/** Bundles a TypeScript child-process script into one runnable ES module, for tests that need real processes. */
import { build } from 'esbuild';

export async function bundleChildScript(entry: string, outfile: string): Promise<string> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    // yaml is CommonJS and calls require('process'); an ES module bundle needs a real require for that.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
  return outfile;
}
