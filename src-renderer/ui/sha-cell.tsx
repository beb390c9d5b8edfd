/**
 * A sha256 as people read it (the first 12 digits, the whole on hover and one click to copy), and saving bytes
 * the page fetched as a file: the Artifacts view's rows and a run's snapshot and output share them.
 */
import { useState } from 'react';
import { CopyIcon } from './icons';
import { shortSha } from '../features/jobs/job-format';
import { saveFile } from './save-file';

/** A tarball the page fetched (an artifact, a run's output), saved as a file. */
export function saveBytes(bytes: Uint8Array, fileName: string): void {
  saveFile(bytes as BlobPart, fileName, 'application/gzip');
}

export function ShaCell({ sha256 }: { sha256: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(sha256);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch {
      // No clipboard (an insecure origin): the full hash stays selectable in the title and the cell.
    }
  };
  return (
    <span className="sha-cell">
      <code title={sha256} data-sha256={sha256}>
        {shortSha(sha256)}
      </code>
      <button type="button" className="icon-button" aria-label={`Copy the full sha256 ${shortSha(sha256)}…`} title="Copy the full sha256" onClick={() => void copy()}>
        <CopyIcon />
      </button>
      {copied && <span className="small muted" role="status">copied</span>}
    </span>
  );
}
