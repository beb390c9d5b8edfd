// The layer table of the source tree as an allow-list, and the lint rule that enforces it (as VS Code's
// `code-layering` does): each area names the areas it may import, so a folder nobody listed — a new one — may
// import nothing and be imported by nothing until someone decides where it sits. A deny-list let a new folder
// reach anything it liked.
import path from 'node:path';

const COORDINATOR = 'src-main/core/coordinator';

/**
 * Area → the areas it may import (besides itself), and why. An area is src-shared, src-renderer, one
 * top-level folder of src-main, or one part (sub-folder) of src-main/core/coordinator. Imports of packages are not the table's business (no-restricted-imports keeps
 * `electron` in the shell and Node built-ins out of the pure code).
 */
export const LAYERS = {
  'src-shared': { may: [], why: 'src-shared is pure and imports nothing from the processes' },
  'src-renderer': { may: ['src-shared'], why: 'the renderer talks to the main process only through the contract in src-shared' },
  'src-main/platform': { may: ['src-shared'], why: 'platform holds OS adapters only' },
  'src-main/core': {
    may: ['src-shared', 'src-main/platform', 'package.json', ...['common', 'membership', 'runs', 'service'].map((p) => `${COORDINATOR}/${p}`)],
    why: 'core is wired to the agent by src-main/app, never directly; it reaches the coordinator through its parts\' index files',
  },
  // The coordinator's parts (src-main/core/coordinator/<part>): common vocabulary at the bottom, membership on it,
  // links on membership, runs on all three, and the service facade composing them. Membership never learns of runs.
  [`${COORDINATOR}/common`]: { may: ['src-shared', 'src-main/platform'], why: 'common/ is the vocabulary every coordinator part shares, so it imports none of them' },
  [`${COORDINATOR}/membership`]: {
    may: ['src-shared', 'src-main/platform', 'src-main/core', `${COORDINATOR}/common`],
    why: 'membership (who is in the cluster) knows nothing of runs or links: they build on it',
  },
  [`${COORDINATOR}/links`]: {
    may: ['src-shared', 'src-main/platform', `${COORDINATOR}/common`, `${COORDINATOR}/membership`],
    why: 'links measure the members\' links; runs use them, not the reverse',
  },
  [`${COORDINATOR}/runs`]: {
    may: ['src-shared', 'src-main/platform', `${COORDINATOR}/common`, `${COORDINATOR}/membership`, `${COORDINATOR}/links`],
    why: 'runs are planned and applied on membership and links; only the service composes runs with the rest',
  },
  [`${COORDINATOR}/service`]: {
    may: ['src-shared', 'src-main/platform', ...['common', 'membership', 'links', 'runs'].map((p) => `${COORDINATOR}/${p}`)],
    why: 'the service facade composes the coordinator\'s parts and is used by core/ and app/',
  },
  'src-main/agent': { may: ['src-shared', 'src-main/platform'], why: 'the agent runs without the coordinator: it may use platform and shared code only' },
  'src-main/app': {
    may: ['src-shared', 'src-main/platform', 'src-main/core', 'src-main/agent', 'package.json', ...['common', 'runs', 'service'].map((p) => `${COORDINATOR}/${p}`)],
    why: 'the composition root is used by the entry points, not the reverse',
  },
  'src-main/cli': { may: ['src-shared', 'src-main/platform', 'src-main/app', 'src-main/headless'], why: 'entry points reach core/ and agent/ only through src-main/app' },
  'src-main/headless': { may: ['src-shared', 'src-main/platform', 'src-main/app'], why: 'entry points reach core/ and agent/ only through src-main/app' },
  'src-main/electron': { may: ['src-shared', 'src-main/platform', 'src-main/app'], why: 'entry points reach core/ and agent/ only through src-main/app' },
};

const ROOTS = ['src-shared', 'src-renderer', 'src-main'];

/**
 * The area a repository-relative path lies in: a coordinator part (`src-main/core/coordinator/runs`; a file loose
 * in src-main/core/coordinator is an area nobody listed, so the coordinator's code stays in its parts),
 * `src-main/core`, `src-shared`, or its first segment (`package.json`, `test`).
 */
export function areaOf(relPath) {
  const parts = relPath.split(/[\\/]/);
  if (parts[0] === '..') return 'outside the repository';
  if (parts.slice(0, 3).join('/') === COORDINATOR && parts.length > 3) return `${COORDINATOR}/${parts[3]}`;
  if (parts[0] === 'src-main' && parts.length > 2) return `src-main/${parts[1]}`;
  return parts[0];
}

/** Why `fromArea` may not import `toArea`, or null when it may. */
export function layerProblem(fromArea, toArea) {
  if (fromArea === toArea) return null;
  const layer = LAYERS[fromArea];
  if (!layer) return `${fromArea} is not in the layer table (lint/layers.js): add it there with the areas it may import before it imports ${toArea}`;
  if (layer.may.includes(toArea)) return null;
  const allowed = layer.may.length > 0 ? layer.may.join(', ') : 'nothing outside itself';
  const unlisted = LAYERS[toArea] ? '' : ` ${toArea} is not in the layer table (lint/layers.js) yet, so nothing may import it.`;
  return `${fromArea} may not import ${toArea}: ${layer.why} (it may import ${allowed}).${unlisted}`;
}

/**
 * Why importing `target` (repository-relative, no extension) from another area breaks the coordinator parts'
 * rule that a part is reached only through its index.ts, or null. Other areas may import any file.
 */
export function indexProblem(fromArea, toArea, target) {
  if (fromArea === toArea || !toArea.startsWith(`${COORDINATOR}/`)) return null;
  const inside = target.replace(/\\/g, '/').replace(/\.(js|ts)$/, '');
  if (inside === toArea || inside === `${toArea}/index`) return null;
  return `${toArea} is reached from other areas only through its index.ts, not ${inside}: export what you need from ${toArea}/index.ts and import the folder`;
}

/** `layers/allowed-imports`: every relative import, re-export and dynamic import checked against LAYERS. */
const allowedImports = {
  meta: { type: 'problem', docs: { description: 'Each area of the source tree imports only the areas lint/layers.js allows it' }, schema: [] },
  create(context) {
    const root = context.cwd;
    const file = path.relative(root, context.filename);
    if (!ROOTS.includes(file.split(/[\\/]/)[0])) return {};
    const fromArea = areaOf(file);
    const check = (source) => {
      if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = path.relative(root, path.resolve(path.dirname(context.filename), source.value));
      const toArea = areaOf(target);
      const problem = layerProblem(fromArea, toArea) ?? indexProblem(fromArea, toArea, target);
      if (problem) context.report({ node: source, message: problem });
    };
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source.type === 'Literal' ? node.source : null),
      // `import('../x').T` in a type: `source` in newer typescript-eslint, the literal inside `argument` in older ones.
      TSImportType: (node) => check(node.source ?? (node.argument?.type === 'TSLiteralType' ? node.argument.literal : null)),
    };
  },
};

export const layersPlugin = { rules: { 'allowed-imports': allowedImports } };
