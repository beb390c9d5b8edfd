/**
 * Where the self-contained worker agent is (dist/agent/gpu-share-agent.cjs, built by scripts/build.mjs with
 * every dependency inside but node-pty) and which version it is: the hash of its bytes, so a rebuilt agent
 * installs into a new folder on the nodes and an unchanged one is never copied twice.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { findAssetsDir } from '../../platform/assets-dir';
import type { AgentBundle } from './remote-install';

export const AGENT_BUNDLE_ENV = 'GPU_SHARE_AGENT_BUNDLE';

export function findAgentBundle(env: NodeJS.ProcessEnv = process.env): AgentBundle {
  const candidates = [
    env[AGENT_BUNDLE_ENV],
    typeof __dirname === 'string' ? path.resolve(__dirname, '..', 'agent', 'gpu-share-agent.cjs') : undefined,
    path.resolve(process.cwd(), 'dist', 'agent', 'gpu-share-agent.cjs'),
  ].filter((c): c is string => !!c);
  const file = candidates.find((c) => existsSync(c));
  if (!file) throw new Error(`the worker agent for SSH nodes is not built (looked for ${candidates.join(', ')}): run \`npm run build\``);
  const version = createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16);
  return { file, assetsDir: findAssetsDir(env), version };
}
