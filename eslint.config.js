// Lint keeps the process boundaries honest: the layer table (lint/layers.js, an allow-list) says which area of
// the tree may import which; `electron` only in the shell, no `node:*` in shared code or the renderer.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { layersPlugin } from './lint/layers.js';

// Bare specifiers only: a group pattern without a slash would match any path segment (a features/events/ folder).
const nodeBuiltinsRegex = '^(node:.*|fs|path|os|child_process|net|http|crypto|events|url|util)(/.*)?$';

export default tseslint.config(
  { ignores: ['.run-ts-*.mjs', 'dist/**', 'node_modules/**', 'release/**', 'test-results/**', 'assets/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Build scripts, the bin launcher and tests run under Node.
    files: ['scripts/**/*.mjs', 'bin/**/*.cjs', '*.config.js', '*.config.ts', 'lint/**/*.js', 'lint/**/*.mjs', 'test/fixtures/bin/**'],
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
            { regex: nodeBuiltinsRegex, message: 'src-shared is pure: no Node built-ins.' },
          ],
        },
      ],
    },
  },
  // One concept per file: a source file past 400 lines is split, not grown (blank lines and comments count too).
  {
    files: ['src-main/**/*.ts', 'src-shared/**/*.ts', 'src-renderer/**/*.ts', 'src-renderer/**/*.tsx', 'bench/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 400 }] },
  },
  // One function reads on a screen: past 100 lines (blank lines and comments not counted) it is split by concept.
  {
    files: ['src-main/**/*.ts', 'src-shared/**/*.ts', 'src-renderer/**/*.ts', 'src-renderer/**/*.tsx'],
    rules: { 'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true }] },
  },
  // The layers, as VS Code's code-layering draws them: platform (OS adapters) <- core (coordinator, API, state) and
  // agent (the worker) <- app (composition root) <- entry points (cli, headless, electron), all over src-shared.
  // An allow-list (lint/layers.js): a folder that is not in the table may import nothing and be imported by nothing.
  {
    files: ['src-main/**/*.ts', 'src-shared/**/*.ts', 'src-renderer/**/*.ts', 'src-renderer/**/*.tsx'],
    plugins: { layers: layersPlugin },
    rules: { 'layers/allowed-imports': 'error' },
  },
  {
    files: ['src-main/**/*.ts'],
    ignores: ['src-main/electron/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'electron', message: 'Only src-main/electron/ (the thin shell) may import electron.' }] }],
    },
  },
  {
    files: ['src-renderer/**/*.ts', 'src-renderer/**/*.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'The renderer talks only through the contract (window API or WebSocket).' }],
          patterns: [
            { regex: nodeBuiltinsRegex, message: 'The renderer runs in a sandboxed page: no Node built-ins.' },
          ],
        },
      ],
    },
  },
);
