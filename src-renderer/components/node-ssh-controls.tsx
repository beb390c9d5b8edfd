/**
 * The SSH part of a `transport: ssh` node's card: Start / Stop by its state, the state's sentence, and the tail
 * of the agent's log on demand; and the view's "Start all" for every ssh node. State from store/node-ssh.ts.
 */
import { useServices } from '../app-context';
import { act, appStore, useApp } from '../store/app-store';
import { nodeSshCommandsFor, sshButtons, toggleSshLog, type NodeSshCommands } from '../store/node-ssh';

function useNodeSshCommands(): NodeSshCommands {
  return nodeSshCommandsFor(useServices().api, appStore);
}

export function NodeSshControls({ name }: { name: string }) {
  const status = useApp((s) => s.nodeSsh.byName[name]);
  const logOpen = useApp((s) => s.nodeSsh.logOpen.includes(name));
  const starting = useApp((s) => s.busy.includes(`ssh:start:${name}`) || s.busy.includes('ssh:start-all'));
  const stopping = useApp((s) => s.busy.includes(`ssh:stop:${name}`));
  const commands = useNodeSshCommands();
  const buttons = sshButtons(status);
  const state = status?.state ?? 'offline';
  const logId = `ssh-log-${name}`;
  return (
    <div className="node-ssh" data-testid="node-ssh" data-ssh-state={state}>
      <p className={`node-ssh-detail${state === 'failed' ? ' node-ssh-failed' : ''}`} data-testid="node-ssh-detail" aria-live="polite">
        {status ? status.detail : 'Not started from this app.'}
      </p>
      <div className="node-ssh-actions">
        {buttons.start && (
          <button type="button" className="button small primary" disabled={starting} onClick={() => void commands.startNode(name)}>
            {buttons.start}
          </button>
        )}
        {buttons.stop && (
          <button type="button" className="button small" disabled={stopping} onClick={() => void commands.stopNode(name)}>
            Stop
          </button>
        )}
        {buttons.pending && <span className="muted">{buttons.pending}</span>}
        {status?.output ? (
          <button type="button" className="button small ghost" aria-expanded={logOpen} aria-controls={logId} onClick={() => act(toggleSshLog, name)}>
            {logOpen ? 'Hide agent log' : 'Show agent log'}
          </button>
        ) : null}
      </div>
      {logOpen && status?.output ? (
        <pre id={logId} className="node-ssh-log mono" data-testid="node-ssh-log" tabIndex={0} aria-label={`Agent log of ${name}`}>
          {status.output}
        </pre>
      ) : null}
    </div>
  );
}

/** Starts every ssh node that is not online or starting; shown only when the file has ssh nodes. */
export function StartAllSshButton({ count }: { count: number }) {
  const busy = useApp((s) => s.busy.includes('ssh:start-all'));
  const commands = useNodeSshCommands();
  if (count === 0) return null;
  return (
    <button type="button" className="button" disabled={busy} onClick={() => void commands.startAllNodes()} title={`Start the workers of the ${count} ssh node(s) over SSH`}>
      {busy ? 'Starting…' : `Start all (${count} SSH)`}
    </button>
  );
}
