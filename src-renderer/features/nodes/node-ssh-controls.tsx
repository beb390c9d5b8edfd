/**
 * The SSH part of a `transport: ssh` node's card: Start / Start and keep / Stop by its state, the state's
 * sentence, a "Kept" mark on a node installed as a service there (Stop then asks whether to uninstall it too),
 * and the tail of the agent's log on demand; and the view's "Start all" for every ssh node. State from
 * store/node-ssh.ts.
 */
import { useState } from 'react';
import { useServices } from '../../app-context';
import { Dialog } from '../../ui/dialog';
import { act, appStore, useApp } from '../../store/app-store';
import { sshButtons, toggleSshLog } from './node-ssh';
import { nodeSshCommandsFor, type NodeSshCommands } from './node-ssh-commands';

function useNodeSshCommands(): NodeSshCommands {
  return nodeSshCommandsFor(useServices().api, appStore);
}

export function NodeSshControls({ name }: { name: string }) {
  const status = useApp((s) => s.nodeSsh.byName[name]);
  const logOpen = useApp((s) => s.nodeSsh.logOpen.includes(name));
  const starting = useApp((s) => s.busy.includes(`ssh:start:${name}`) || s.busy.includes('ssh:start-all'));
  const stopping = useApp((s) => s.busy.includes(`ssh:stop:${name}`));
  const commands = useNodeSshCommands();
  const [asking, setAsking] = useState(false);
  const buttons = sshButtons(status);
  const state = status?.state ?? 'offline';
  const logId = `ssh-log-${name}`;
  const stop = (uninstall: boolean) => {
    setAsking(false);
    void commands.stopNode(name, uninstall);
  };
  return (
    <div className="node-ssh" data-testid="node-ssh" data-ssh-state={state} data-kept={status?.kept ? 'yes' : undefined}>
      {status?.kept && (
        <p className="node-ssh-kept small" data-testid="node-ssh-kept">
          <span className="badge tone-info">Kept</span> installed as a service on {name}: it starts again after a reboot
        </p>
      )}
      <p className={`node-ssh-detail${state === 'failed' ? ' node-ssh-failed' : ''}`} data-testid="node-ssh-detail" aria-live="polite">
        {status ? status.detail : 'Not started from this app.'}
      </p>
      <div className="node-ssh-actions">
        {buttons.start && (
          <button type="button" className="button small primary" disabled={starting} onClick={() => void commands.startNode(name)}>
            {buttons.start}
          </button>
        )}
        {buttons.keep && (
          <button
            type="button"
            className="button small"
            disabled={starting}
            onClick={() => void commands.startNode(name, true)}
            title={`Start the worker and install it as a service on ${name}, so it comes back after a reboot (gpu-share worker install over SSH)`}
          >
            Start and keep
          </button>
        )}
        {buttons.stop && (
          <button type="button" className="button small" disabled={stopping} onClick={() => (buttons.stopAsks ? setAsking(true) : stop(false))}>
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
      {asking && (
        <Dialog
          title={`Stop ${name}?`}
          testId="ssh-stop-dialog"
          onCancel={() => setAsking(false)}
          actions={
            <>
              <button type="button" className="button" onClick={() => stop(false)}>
                Stop now
              </button>
              <button type="button" className="button danger" onClick={() => stop(true)}>
                Stop and uninstall
              </button>
              <button type="button" className="button ghost" autoFocus onClick={() => setAsking(false)}>
                Cancel
              </button>
            </>
          }
        >
          <p>
            {name} is kept: its worker is installed as a service there. <strong>Stop now</strong> stops the worker and leaves the service installed, so it starts
            again at the machine's next boot. <strong>Stop and uninstall</strong> also runs <code className="mono">gpu-share worker uninstall</code> there, which
            removes every file the install wrote.
          </p>
        </Dialog>
      )}
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
