#!/usr/bin/env node
// The `gpu-share` command: a thin launcher for the bundled CLI (built by `npm install`).
const path = require('node:path');
const fs = require('node:fs');
const cli = path.join(__dirname, '..', 'dist', 'main', 'cli.cjs');
if (!fs.existsSync(cli)) {
  process.stderr.write('gpu-share is not built yet: run `npm install` (or `npm run build`) in ' + path.dirname(__dirname) + '\n');
  process.exit(2);
}
require(cli);
