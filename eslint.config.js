// Lint keeps the process boundaries honest: `electron` only in the shell, no `node:*` in shared code,
// nothing from the main process in the renderer.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

/** no-restricted-imports for one folder of src-main: no electron (outside the shell), no renderer, none of `forbidden`. */
function mainLayer(files, forbidden, why) {
  return [
    {
      files: [files],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            paths: [{ name: 'electron', message: 'Only src-main/electron/ (the thin shell) may import electron.' }],
            patterns: [
              { group: ['**/src-renderer/**'], message: 'The main process never imports the renderer.' },
              { regex: `^(\\.\\./)+(${forbidden.join('|')})/`, message: `Layers: ${why}.` },
            ],
          },
        ],
      },
    },
  ];
}

const nodeBuiltins = ['node:*', 'fs', 'path', 'os', 'child_process', 'net', 'http', 'crypto', 'events', 'url', 'util'];

export default tseslint.config(
  { ignores: ['.run-ts-*.mjs', 'dist/**', 'node_modules/**', 'release/**', 'test-results/**', 'assets/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Build scripts, the bin launcher and tests run under Node.
    files: ['scripts/**/*.mjs', 'bin/**/*.cjs', '*.config.js', '*.config.ts', 'test/fixtures/bin/**'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['bin/**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src-shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'src-shared is pure: no electron.' }],
          patterns: [
            { group: nodeBuiltins, message: 'src-shared is pure: no Node built-ins.' },
            { group: ['**/src-main/**', '**/src-renderer/**', '../../src-main/*', '../../src-renderer/*'], message: 'src-shared imports nothing from the processes.' },
          ],
        },
      ],
    },
  },
  // The main process in layers, each importing only those below it (as VS Code's layer rules do):
  //   platform (OS adapters) ← core (coordinator, API, state) and agent (the worker) ← app (composition root)
  //   ← entry points (cli, headless, electron). Core and agent never import each other.
  ...mainLayer('src-main/platform/**/*.ts', ['core', 'agent', 'app', 'cli', 'headless', 'electron'], 'platform holds OS adapters only'),
  ...mainLayer('src-main/core/**/*.ts', ['agent', 'app', 'cli', 'headless', 'electron'], 'core is wired to the agent by src-main/app, never directly'),
  ...mainLayer('src-main/agent/**/*.ts', ['core', 'app', 'cli', 'headless', 'electron'], 'the agent runs without the coordinator: it may use platform and shared code only'),
  ...mainLayer('src-main/app/**/*.ts', ['cli', 'headless', 'electron'], 'the composition root is used by the entry points, not the reverse'),
  ...mainLayer('src-main/{cli,headless}/**/*.ts', ['electron'], 'entry points without a window never load the shell'),
  {
    files: ['src-renderer/**/*.ts', 'src-renderer/**/*.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'The renderer talks only through the contract (window API or WebSocket).' }],
          patterns: [
            { group: nodeBuiltins, message: 'The renderer runs in a sandboxed page: no Node built-ins.' },
            { group: ['**/src-main/**'], message: 'The renderer never imports the main process.' },
          ],
        },
      ],
    },
  },
);
