/**
 * What finished jobs produced: one row per tarball (content-addressed, so identical outputs are one row with
 * every job attempt that made them), its size and age, Download (saved as <job name>-<sha12>.tar.gz) and Delete
 * (after the shared confirmation); above them the retention rule (retention-card.tsx).
 */
import { useEffect } from 'react';
import { useServices } from '../../app-context';
import { askConfirm } from '../../store/actions';
import { act, appStore } from '../../store/app-store';
import { artifactCommandsFor } from './artifact-commands';
import { RetentionCard } from './retention-card';
import type { ArtifactSnapshot } from '../../../src-shared/jobs/types';
import { DownloadIcon } from '../../ui/icons';
import { saveBytes, ShaCell } from '../../ui/sha-cell';
import { useJobCommands } from '../jobs/use-job-commands';
import { artifactFileName, formatBytes, producedByText } from '../jobs/job-format';
import { useApp } from '../../store/app-store';

function ArtifactRow({ artifact }: { artifact: ArtifactSnapshot }) {
  const commands = useJobCommands();
  const busy = useApp((s) => s.busy.includes(`artifacts:get:${artifact.sha256}`));
  const deleting = useApp((s) => s.busy.includes(`artifacts:delete:${artifact.sha256}`));
  const fileName = artifactFileName(artifact);
  const download = async () => {
    const bytes = await commands.fetchArtifact(artifact.sha256);
    if (bytes) saveBytes(bytes, fileName);
  };
  return (
    <tr data-artifact={artifact.sha256}>
      <th scope="row">
        <ShaCell sha256={artifact.sha256} />
      </th>
      <td className="num">{formatBytes(artifact.sizeBytes)}</td>
      <td>{producedByText(artifact)}</td>
      <td className="small">{new Date(artifact.createdAt).toLocaleString()}</td>
      <td>
        <button type="button" className="button small" disabled={busy} aria-label={`Download ${fileName}`} onClick={() => void download()}>
          <DownloadIcon /> {busy ? 'Downloading…' : 'Download'}
        </button>{' '}
        <button
          type="button"
          className="button small danger"
          disabled={deleting || busy}
          aria-label={`Delete artifact ${artifact.sha256.slice(0, 12)}`}
          onClick={() => act(askConfirm, { kind: 'delete-artifact', sha256: artifact.sha256, madeBy: producedByText(artifact) })}
        >
          {deleting ? 'Deleting…' : 'Delete'}
        </button>
      </td>
    </tr>
  );
}

export function ArtifactsView() {
  const artifacts = useApp((s) => s.jobs.artifacts);
  const completed = useApp((s) => s.jobs.state?.counts.completed ?? 0);
  const housekeeping = useApp((s) => s.jobs.housekeeping);
  const artifactCommands = artifactCommandsFor(useServices().api, appStore);

  // Artifacts have no event of their own: list them (and the rule) when the view opens and whenever a job completes.
  useEffect(() => {
    void artifactCommands.reload();
  }, [artifactCommands, completed]);

  return (
    <section className="view" aria-labelledby="view-title" data-testid="artifacts-view" data-artifact-count={artifacts?.length ?? 0}>
      <div className="view-head">
        <div>
          <h1 id="view-title" className="view-title" tabIndex={-1}>
            Artifacts
          </h1>
          <p className="view-sub muted">Each completed job's output folder as a reproducible tarball, stored once by its sha256.</p>
        </div>
      </div>
      {housekeeping && <RetentionCard housekeeping={housekeeping} commands={artifactCommands} />}
      {artifacts && artifacts.length > 0 ? (
        <section className="card table-card" aria-label="Artifacts">
          <div className="table-scroll">
            <table className="table" data-testid="artifacts-table">
              <caption className="visually-hidden">Artifacts produced by jobs</caption>
              <thead>
                <tr>
                  <th scope="col">sha256</th>
                  <th scope="col" className="num">
                    Size
                  </th>
                  <th scope="col">Produced by</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span className="visually-hidden">Download or delete</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {artifacts.map((a) => (
                  <ArtifactRow key={a.sha256} artifact={a} />
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ) : (
        <div className="empty" data-testid="artifacts-empty">
          <DownloadIcon size={36} />
          <h2>No artifacts yet</h2>
          <p>When a job exits 0, what it wrote into GPU_SHARE_OUTPUT_DIR is packed and listed here.</p>
        </div>
      )}
    </section>
  );
}
