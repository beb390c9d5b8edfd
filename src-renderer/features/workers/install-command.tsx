/**
 * The Add a worker panel's second command: the same join installed as a service on that machine (`gpu-share
 * worker install`, issue 18), which comes back after a reboot or a crash, with --name so the service keeps one
 * name for good. The token travels as the one-off command's does: in GPU_SHARE_JOIN_TOKEN, never in argv.
 */
import { useRef, useState } from 'react';
import type { CoordinatorInfo } from '../../../src-shared/training';
import { secondWorkerName } from '../../../src-shared/nodes/join-hint';
import { CopyIcon } from '../../ui/icons';

/** The command to copy: the core's install command with --name ($(hostname) on the other machine; a second name here). */
export function installCommandText(info: Pick<CoordinatorInfo, 'installCommand' | 'reachableFromOtherMachines'>, ownNode: string): string | null {
  if (!info.installCommand) return null;
  if (/\s--name\s/.test(`${info.installCommand} `)) return info.installCommand;
  return `${info.installCommand} --name ${info.reachableFromOtherMachines ? '"$(hostname)"' : secondWorkerName(ownNode)}`;
}

export function InstallCommand({ info, ownNode }: { info: CoordinatorInfo; ownNode: string }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const codeRef = useRef<HTMLElement>(null);
  const command = installCommandText(info, ownNode);
  if (!command) return null;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(command);
      setCopied('yes');
    } catch {
      // No clipboard permission (plain http, not localhost): select the text so Ctrl+C works.
      const range = document.createRange();
      if (codeRef.current) range.selectNodeContents(codeRef.current);
      window.getSelection()?.removeAllRanges();
      window.getSelection()?.addRange(range);
      setCopied('failed');
    }
  };
  return (
    <div className="install-command" data-testid="install-command-box">
      <h3 className="install-command-title">Or keep it: install it as a service</h3>
      <div className="command-box">
        <code ref={codeRef} className="mono" data-testid="install-command">
          {command}
        </code>
        <button type="button" className="button small" onClick={() => void copy()} aria-label="Copy the install command">
          <CopyIcon /> Copy
        </button>
      </div>
      <p className="muted small" role="status" data-testid="install-command-help">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'failed'
            ? 'The browser refused the clipboard: the command is selected, press Ctrl+C.'
            : <>A service (systemd on Linux, launchd on macOS, a Scheduled Task on Windows) that starts the worker again after a reboot or a crash. Check it with <code className="mono">gpu-share worker status</code>; remove it with <code className="mono">gpu-share worker uninstall</code>.</>}
      </p>
    </div>
  );
}
