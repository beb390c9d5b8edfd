/**
 * An ssh node's host key is unknown: the page asks, as ssh does, whether to trust it. Cancel has the focus, so
 * Enter sends nothing to a machine the person has not vouched for; Connect remembers the key in known_hosts.
 */
import { useEffect, useRef } from 'react';
import { useServices } from '../../app-context';
import { appStore, useApp } from '../../store/app-store';
import { pendingHostKey } from './node-ssh';
import { nodeSshCommandsFor } from './node-ssh-commands';
import { Dialog } from '../../ui/dialog';

export interface HostKeyPromptProps {
  name: string;
  host: string;
  fingerprint: string;
  answering: boolean;
  onAnswer(accept: boolean): void;
}

/** The question itself, apart from the store, so it can be rendered on its own. */
export function HostKeyPrompt({ name, host, fingerprint, answering, onAnswer }: HostKeyPromptProps) {
  const safe = useRef<HTMLButtonElement>(null);
  // showModal() focuses the first button, Connect; the safe choice takes focus once it is open.
  useEffect(() => {
    const frame = requestAnimationFrame(() => safe.current?.focus());
    return () => cancelAnimationFrame(frame);
  }, [name, fingerprint]);
  return (
    <Dialog
      title={`Connect to ${name}?`}
      testId="host-key-dialog"
      onCancel={() => onAnswer(false)}
      actions={
        <>
          <button type="button" className="button primary" disabled={answering} onClick={() => onAnswer(true)}>
            Connect
          </button>
          <button ref={safe} type="button" className="button ghost" disabled={answering} onClick={() => onAnswer(false)}>
            Cancel
          </button>
        </>
      }
    >
      <p>
        The authenticity of host <span className="mono">{host}</span> can&apos;t be established. Its key fingerprint is{' '}
        <span className="mono host-key-fingerprint" data-testid="host-key-fingerprint">
          {fingerprint}
        </span>
        . Connect and remember it?
      </p>
      <p className="muted">Compare it with the one the machine shows (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub). Cancel sends nothing to it.</p>
    </Dialog>
  );
}

/** The prompt for the first node waiting for a host key answer, if any. */
export function HostKeyDialog() {
  // Two strings, not the object: a fresh object on each render would never settle.
  const name = useApp((s) => pendingHostKey(s.nodeSsh)?.name ?? null);
  const fingerprint = useApp((s) => pendingHostKey(s.nodeSsh)?.fingerprint ?? null);
  const host = useApp((s) => s.cluster?.config.nodes.find((n) => n.name === name)?.host ?? name ?? '');
  const answering = useApp((s) => (name ? s.busy.includes(`ssh:host-key:${name}`) : false));
  const commands = nodeSshCommandsFor(useServices().api, appStore);
  if (!name || !fingerprint) return null;
  return (
    <HostKeyPrompt
      key={`${name} ${fingerprint}`}
      name={name}
      host={host}
      fingerprint={fingerprint}
      answering={answering}
      onAnswer={(accept) => void commands.answerHostKey(name, fingerprint, accept)}
    />
  );
}
