/**
 * What `gpu-share nodes …` (cli/commands/nodes/) launches ssh workers with: the agent bundle and the launcher
 * that the app's ssh feature uses too. The entry points reach core/ only through app/ (eslint.config.js), so
 * the CLI borrows exactly these.
 */
export { findAgentBundle } from '../core/ssh/agent-bundle';
export { NodeLauncher, type CoordinatorJoin } from '../core/ssh/node-launcher';
export { probeNodeStatus } from '../core/ssh/ssh-failure';
