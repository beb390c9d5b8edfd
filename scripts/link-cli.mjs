// Puts `gpu-share` on PATH, so the join command the app shows (`GPU_SHARE_JOIN_TOKEN=… gpu-share worker --join …`)
// runs as printed. Run by `npm install` (after the build) and by `npm run link-cli`; GPU_SHARE_NO_LINK=1 skips it.
//
// A symlink to this clone's bin/gpu-share.cjs in the first folder on PATH that this user may write: /usr/local/bin
// for root, ~/.local/bin or ~/bin for everyone else (npm's global folder when it is on PATH and writable, as with
// nvm). `npm link` alone fails for a normal user where npm's global folder belongs to root (/usr on Debian).
// A file of that name that is not a link to a gpu-share clone is never replaced.
import { existsSync, lstatSync, mkdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, accessSync, constants } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const target = path.join(root, 'bin', 'gpu-share.cjs');
const say = (line) => console.log(`link-cli: ${line}`);

if (process.env.GPU_SHARE_NO_LINK) {
  say('GPU_SHARE_NO_LINK is set: gpu-share was not put on PATH (run it as `npx gpu-share` here)');
  process.exit(0);
}
if (process.platform === 'win32') {
  say('on Windows, run `npm link` in this folder to put gpu-share on PATH (or use `npx gpu-share` here)');
  process.exit(0);
}

const home = os.homedir();
const pathDirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean).map((d) => path.resolve(d));
const onPath = (dir) => pathDirs.includes(path.resolve(dir));
const writable = (dir) => {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
};

/** Where `gpu-share` resolves on PATH now, or null. */
function current() {
  for (const dir of pathDirs) {
    const file = path.join(dir, 'gpu-share');
    if (existsSync(file)) return file;
  }
  return null;
}

const found = current();
if (found && realpathSync(found) === realpathSync(target)) {
  say(`gpu-share is on PATH: ${found} → ${target}`);
  process.exit(0);
}

const npmBin = process.env.npm_config_prefix ? path.join(process.env.npm_config_prefix, 'bin') : null;
const candidates = [
  ...(process.getuid?.() === 0 ? ['/usr/local/bin'] : []),
  ...(npmBin ? [npmBin] : []),
  path.join(home, '.local', 'bin'),
  path.join(home, 'bin'),
].filter((d, i, all) => all.indexOf(d) === i);
const userBin = path.join(home, '.local', 'bin');
const dir = candidates.find((d) => onPath(d) && (existsSync(d) ? writable(d) : d.startsWith(home))) ?? userBin;

/** Another clone's link may be replaced; anything else is left alone. */
function replaceable(file) {
  let stat;
  try {
    stat = lstatSync(file);
  } catch {
    return true;
  }
  return stat.isSymbolicLink() && path.basename(readlinkSync(file)) === 'gpu-share.cjs';
}

const link = path.join(dir, 'gpu-share');
if (!replaceable(link)) {
  say(`${link} exists and is not a link to a gpu-share clone: left as it is. Run gpu-share as \`npx gpu-share\` here, or remove that file and run \`npm run link-cli\`.`);
  process.exit(0);
}
try {
  mkdirSync(dir, { recursive: true });
  rmSync(link, { force: true });
  symlinkSync(target, link);
} catch (error) {
  say(`could not link ${link} (${error.message}); run gpu-share as \`npx gpu-share\` here, or \`npm link\` with a writable npm prefix`);
  process.exit(0);
}
if (onPath(dir)) {
  say(`gpu-share is on PATH: ${link} → ${target}`);
  if (found && found !== link) say(`note: ${found} comes first on PATH and is another gpu-share; remove it to use this one`);
} else {
  say(`gpu-share is in ${dir}, which is not on PATH in this shell.`);
  say(`  Most Linux logins add it (~/.profile does when the folder exists): open a new login shell, or now run:`);
  say(`  export PATH="${dir}:$PATH"`);
}
