// The import-circle check (lint/import-circles.mjs) must see circles made only of `import type` and
// `export … from`: those tie files together as much as value imports do, and a checker that skips them
// would pass the type circles issue 27 removes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script of the lint, without types
import { findCircles, pending } from '../../../lint/import-circles.mjs';

let dir = '';
afterEach(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = '';
});

/** A folder with these files, for the check to read. */
function tree(files: Record<string, string>): string {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-circles-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe('import-circles', () => {
  it('finds a circle of `import type` only, naming its files', async () => {
    const root = tree({
      'src/a.ts': "import type { B } from './b';\nexport interface A { b?: B }\n",
      'src/b.ts': "import type { A } from './a';\nexport interface B { a?: A }\n",
    });
    expect(await findCircles(root, ['src'])).toEqual([['src/a.ts', 'src/b.ts']]);
  });

  it('finds a circle through a re-export and a .tsx file, three files long', async () => {
    const root = tree({
      'src/view.tsx': "import { model } from './model';\nexport const View = () => model;\n",
      'src/model.ts': "export { helper as model } from './helper';\n",
      'src/helper.ts': "import type { View } from './view';\nexport const helper = 1;\nexport type V = typeof View;\n",
    });
    // In import order, from wherever madge entered the circle: helper -> view -> model -> helper.
    expect(await findCircles(root, ['src'])).toEqual([['src/helper.ts', 'src/view.tsx', 'src/model.ts']]);
  });

  it('passes a one-way type import', async () => {
    const root = tree({
      'src/a.ts': "import type { B } from './b';\nexport type A = B[];\n",
      'src/b.ts': 'export interface B { n: number }\n',
    });
    expect(await findCircles(root, ['src'])).toEqual([]);
  });

  it('a circle with one file outside the folders not checked yet fails', () => {
    expect(pending(['src-renderer/a.ts', 'src-renderer/b.ts'], ['src-renderer/'])).toBe(true);
    expect(pending(['src-renderer/a.ts', 'src-shared/b.ts'], ['src-renderer/'])).toBe(false);
  });
});
