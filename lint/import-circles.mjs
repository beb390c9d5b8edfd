// The import-circle check of `npm run lint`: a circle (a imports b imports … a) means no file of it can be read,
// tested or moved alone, and the layer table (lint/layers.js) cannot see one inside an area. madge follows every
// import, `import type` and `export … from` included: a type-only circle still ties the files' meanings together.
// Fails naming each circle's files, in import order.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';

/** The folders checked, repository-relative. */
export const CHECKED = ['src-main', 'src-shared', 'src-renderer'];

/**
 * Folders whose circles are reported but do not fail the check yet: the areas being untangled by other work
 * (issue 27). Empty this list as each lands; a circle with any file outside these folders always fails.
 */
export const NOT_YET = [];

/** Every import circle among the .ts/.tsx files under `dirs` (absolute or relative to `root`), each as its files relative to `root`. */
export async function findCircles(root, dirs) {
  const result = await madge(dirs.map((d) => path.resolve(root, d)), {
    baseDir: root,
    fileExtensions: ['ts', 'tsx'],
    detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false } },
  });
  return result.circular().map((circle) => circle.map((file) => path.relative(root, path.resolve(root, file)).split(path.sep).join('/')));
}

/** Whether every file of a circle lies in a folder of NOT_YET. */
export function pending(circle, notYet = NOT_YET) {
  return circle.every((file) => notYet.some((dir) => file.startsWith(dir)));
}

async function main() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const circles = await findCircles(root, CHECKED);
  const failing = circles.filter((c) => !pending(c));
  const waiting = circles.filter((c) => pending(c));
  const show = (c) => `  ${[...c, c[0]].join(' -> ')}\n`;
  if (waiting.length > 0) {
    process.stdout.write(`import circles: ${waiting.length} in folders not checked yet (lint/import-circles.mjs NOT_YET: ${NOT_YET.join(', ')}):\n${waiting.map(show).join('')}`);
  }
  if (failing.length > 0) {
    process.stderr.write(`import circles: ${failing.length} found in ${CHECKED.join(', ')}; break each (move the shared piece to a file both import, or name a type structurally):\n${failing.map(show).join('')}`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`import circles: none in ${CHECKED.join(', ')}${waiting.length > 0 ? ' outside NOT_YET' : ''}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
