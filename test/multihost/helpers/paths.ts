/** Where things are: the repository, its assets, and the example trainer every case runs. */
import path from 'node:path';
import { findRepoRoot } from '../../integration/helpers/agent-bundle';

export const repoRoot = findRepoRoot();
export const assetsDir = path.join(repoRoot, 'assets');
export const TRAINER = path.join(assetsDir, 'trainers', 'ddp_example.py');
/** The build the cases run: dist/, or another build to compare against (GPU_SHARE_MULTIHOST_DIST=/path/to/dist). */
export const distDir = process.env.GPU_SHARE_MULTIHOST_DIST ?? path.join(repoRoot, 'dist');
