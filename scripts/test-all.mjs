// `npm test`: everything CI checks, in the order that fails fastest — build (the e2e, integration and multihost
// tests drive the built app), lint, typecheck, then every vitest project. Ends with one plain summary line.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';

const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
function step(title, cmd, args) {
  console.log(`\n── ${title} ──`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: process.env });
  if (r.status !== 0) {
    console.error(`\n${title} failed (exit ${r.status ?? r.signal}).`);
    process.exit(r.status || 1);
  }
}

step('build', process.execPath, ['scripts/build.mjs']);
step('lint', npx, ['eslint', '.']);
step('typecheck', 'npm', ['run', '--silent', 'typecheck']);

mkdirSync('test-results', { recursive: true });
console.log('\n── tests (unit, integration, e2e, multihost) ──');
const run = spawnSync(
  npx,
  ['vitest', 'run', '--reporter=default', '--reporter=json', '--outputFile.json=test-results/vitest.json', ...process.argv.slice(2)],
  { stdio: 'inherit', env: process.env },
);
if (existsSync('test-results/vitest.json')) {
  const r = JSON.parse(readFileSync('test-results/vitest.json', 'utf8'));
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  console.log(`\ntests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
}
process.exit(run.status ?? 1);
