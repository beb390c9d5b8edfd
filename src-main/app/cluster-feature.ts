/**
 * The cluster in the app: cluster.yaml loaded, imported (replace or merge), edited (add this machine, remove a
 * node) and exported, its IPC handlers, and each change sent to the pages. Other features that write the file
 * (status-feature's "Add to cluster.yaml") go through `commit`, so every write keeps the file's comments and
 * never overwrites a file changed behind the app's back. app-core.ts builds it first: everything reads `config`.
 */
import { notAClusterFile } from '../../src-shared/cluster/sniff-file';
import { previewImportConfig } from '../../src-shared/cluster/import-preview';
import type { ClusterConfig, ClusterIssue } from '../../src-shared/cluster/types';
import {
  clusterSummary,
  findMachineNode,
  machineDrift,
  mergeClusters,
  parseClusterYaml,
  serializeClusterYaml,
  upsertMachineNode,
  validateCluster,
} from '../../src-shared/cluster/index';
import type { ClusterRequestResults } from '../../src-shared/cluster/ipc-cluster';
import type { HardwareSnapshot } from '../../src-shared/hardware';
import type { ClusterState, EmitEvent, RequestHandlers } from '../../src-shared/ipc';
import { hardwareToNode } from '../platform/hardware/index';
import { ClusterChangedError, ClusterStore, type ClusterLoadResult } from './cluster-store';
import { RequestError } from './ipc-dispatch';

type ClusterHandlers = Pick<RequestHandlers, keyof ClusterRequestResults>;

export interface ClusterFeature {
  handlers: ClusterHandlers;
  /** The cluster as adopted now (the empty cluster while the file on disk could not be loaded). */
  config(): ClusterConfig;
  /** What the pages show: the cluster, its file, its warnings (with this machine's drift) and this machine's node. */
  state(): ClusterState;
  /** Throws, naming the file and what to do, while cluster.yaml could not be loaded: writing would replace the person's file. */
  refuseWhileUnloaded(action: string): void;
  /** Validated, written (atomically, keeping .bak and the file's comments) and adopted; the old cluster stays on any error. */
  commit(next: ClusterConfig): Promise<ClusterState>;
}

export async function createClusterFeature(opts: {
  /** cluster.yaml's path (`--cluster PATH`, or the data folder's). */
  path: string;
  /** This machine's hardware as last seen, and a fresh look at it (adding this machine takes a fresh one). */
  hardware: () => HardwareSnapshot;
  refreshHardware: () => Promise<HardwareSnapshot>;
  emit: EmitEvent;
  /** The events feed: a cluster imported, this machine added (issue 17 defect 11). */
  event?: (kind: 'cluster-imported' | 'node-added', message: string, node?: string) => void;
}): Promise<ClusterFeature> {
  const store = new ClusterStore(opts.path);
  const loaded = await store.load();
  let config: ClusterConfig = loaded.config ?? { nodes: [] };
  let { unloadedFile, fileWarnings } = loadProblems(store.path, loaded);

  const state = (): ClusterState => {
    const detected = hardwareToNode(opts.hardware());
    const declared = config.nodes.length > 0 ? findMachineNode(config, detected) : null;
    return {
      config,
      path: store.path,
      warnings: [...fileWarnings, ...(declared ? machineDrift(declared, detected) : [])],
      thisMachineNode: declared?.name ?? null,
      summary: config.nodes.length > 0 ? clusterSummary(config) : 'Cluster: 0 node(s), 0 adapter slots\n',
    };
  };

  /** Someone else wrote cluster.yaml meanwhile: show their version and ask for the action again, instead of overwriting it. */
  const adoptChangedFile = async (changed: ClusterChangedError): Promise<never> => {
    const reloaded = await store.load();
    if (reloaded.config) {
      config = reloaded.config;
      fileWarnings = reloaded.warnings;
      unloadedFile = null;
      opts.emit('onCluster', state());
      throw new RequestError(`${changed.filePath} was changed by another program since GPU Share read it, so it was not overwritten. GPU Share now shows the new version; check it and try again.`);
    }
    throw new RequestError(`${changed.message}.`);
  };

  /** `sourceText` is a dropped file that replaces the cluster, written as it is. */
  const commit = async (next: ClusterConfig, warnings: ClusterIssue[], sourceText?: string): Promise<ClusterState> => {
    try {
      await store.save(next, sourceText === undefined ? {} : { sourceText });
    } catch (error) {
      if (error instanceof ClusterChangedError) await adoptChangedFile(error);
      throw error;
    }
    config = next;
    unloadedFile = null;
    fileWarnings = warnings;
    const adopted = state();
    opts.emit('onCluster', adopted);
    return adopted;
  };

  const refuseWhileUnloaded = (action: string): void => {
    if (unloadedFile === null) return;
    throw new RequestError(
      `${store.path} is not a valid cluster (${unloadedFile}), so ${action} would overwrite it. Fix it and drop it on this window (or restart GPU Share), or drop a valid cluster.yaml and choose to replace it.`,
    );
  };

  const handlers: ClusterHandlers = {
    getCluster: async () => state(),
    importCluster: async ({ fileName, text, mode }) => {
      const notCluster = notAClusterFile(fileName, text);
      if (notCluster) return { ok: false, fileName, errors: [notCluster], warnings: [] };
      const parsed = parseClusterYaml(text);
      if (!parsed.ok) return { ok: false, fileName, errors: parsed.errors, warnings: parsed.warnings };
      if (mode === 'merge') refuseWhileUnloaded(`merging ${fileName} into it`);
      const change = importChange(config, parsed.config, mode);
      if (!change.ok) return { ok: false, fileName, errors: change.errors, warnings: parsed.warnings };
      const { next, added, updated, removed } = change;
      const adopted = await commit(next, parsed.warnings, next === parsed.config ? text : undefined);
      opts.event?.('cluster-imported', importedText(fileName, mode === 'merge' ? 'merged' : 'replaced', next.nodes.length, { added, updated, removed }));
      return { ok: true, state: adopted, added, updated, removed };
    },
    addThisMachine: async () => {
      refuseWhileUnloaded('adding this machine');
      const result = upsertMachineNode(config.nodes.length > 0 ? config : null, hardwareToNode(await opts.refreshHardware()));
      const adopted = await commit(result.config, fileWarnings);
      opts.event?.('node-added', `This machine ${result.action === 'added' ? 'added to' : 'updated in'} ${store.path} as node ${result.nodeName}`, result.nodeName);
      return { state: adopted, action: result.action, nodeName: result.nodeName };
    },
    removeNode: async ({ name }) => {
      if (!config.nodes.some((n) => n.name === name)) throw new RequestError(`there is no node named "${name}"`);
      if (config.nodes.length === 1) {
        throw new RequestError(`"${name}" is the last node and a cluster needs at least one: add another node first, or drop a cluster.yaml to replace it`);
      }
      return commit({ nodes: config.nodes.filter((n) => n.name !== name) }, fileWarnings);
    },
    exportCluster: async () => ({ fileName: 'cluster.yaml', text: serializeClusterYaml(config) }),
  };

  return {
    handlers,
    config: () => config,
    state,
    refuseWhileUnloaded,
    commit: (next) => commit(next, fileWarnings),
  };
}

/**
 * Why the file on disk could not be loaded (null when it was), until something replaces it on purpose. Adding
 * this machine or merging into the empty cluster shown meanwhile would silently write a one-node file over the
 * person's (say, ten-node) file with one typo, so those are refused; a dropped file chosen to replace it is not.
 */
function loadProblems(file: string, loaded: Pick<ClusterLoadResult, 'errors' | 'warnings'>): { unloadedFile: string | null; fileWarnings: ClusterIssue[] } {
  if (loaded.errors.length === 0) return { unloadedFile: null, fileWarnings: loaded.warnings };
  const unloadedFile = loaded.errors.map((e) => (e.line ? `line ${e.line}: ${e.message}` : e.message)).join('; ');
  const message = `${file} is not a valid cluster and was left untouched (${unloadedFile}). Fix it, or drop a valid cluster.yaml to replace it.`;
  return { unloadedFile, fileWarnings: [{ severity: 'warning', path: [], message }] };
}

type ImportChange = { ok: true; next: ClusterConfig; added: string[]; updated: string[]; removed: string[] } | { ok: false; errors: ClusterIssue[] };

/** The cluster after importing `incoming` (replacing the current one, or merged into it) and the nodes that changed. */
function importChange(current: ClusterConfig, incoming: ClusterConfig, mode: 'replace' | 'merge'): ImportChange {
  if (mode === 'merge' && current.nodes.length > 0) {
    const merged = mergeClusters(current, incoming);
    const errors = validateCluster(merged.config);
    if (errors.length > 0) return { ok: false, errors };
    return { ok: true, next: merged.config, added: merged.added, updated: merged.updated, removed: [] };
  }
  // Replace: what the file changes against the cluster before, not every node of the file as "added".
  const replaced = previewImportConfig(current, incoming).replace;
  return { ok: true, next: incoming, added: replaced.added, updated: replaced.replaced, removed: replaced.removed };
}

/** "Imported cluster.yaml (merged): 2 nodes added (gamma, delta), 1 updated; 4 nodes now"; Replace also names what it removed. */
function importedText(fileName: string, how: 'merged' | 'replaced', total: number, change: { added: readonly string[]; updated: readonly string[]; removed: readonly string[] }): string {
  const names = (list: readonly string[]) => (list.length > 0 ? ` (${list.slice(0, 5).join(', ')}${list.length > 5 ? ` and ${list.length - 5} more` : ''})` : '');
  const { added, updated, removed } = change;
  const gone = removed.length > 0 ? `, ${removed.length} removed${names(removed)}` : '';
  return `Imported ${fileName} (${how}): ${added.length} node${added.length === 1 ? '' : 's'} added${names(added)}, ${updated.length} updated${names(updated)}${gone}; ${total} node${total === 1 ? '' : 's'} now`;
}
