/**
 * What finished jobs produced: one row per tarball (content-addressed, so identical outputs are one row with
 * every job attempt that made them), its size and age, and Download, saved as <job name>-<sha12>.tar.gz.
 */
import { useEffect } from 'react';
import type { ArtifactSnapshot } from '../../../src-shared/jobs/types';
import { DownloadIcon } from '../../ui/icons';
import { saveBytes, ShaCell } from '../../ui/sha-cell';
import { useJobCommands } from '../jobs/use-job-commands';
import { artifactFileName, formatBytes, producedByText } from '../jobs/job-format';
import { useApp } from '../../store/app-store';

function ArtifactRow({ artifact }: { artifact: ArtifactSnapshot }) {
  const commands = useJobCommands();
  const busy = useApp((s) => s.busy.includes(`artifacts:get:${artifact.sha256}`));
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
        </button>
      </td>
    </tr>
  );
}

export function ArtifactsView() {
  const artifacts = useApp((s) => s.jobs.artifacts);
  const completed = useApp((s) => s.jobs.state?.counts.completed ?? 0);
  const commands = useJobCommands();

  // Artifacts have no event of their own: list them when the view opens and whenever a job completes.
  useEffect(() => {
    void commands.loadArtifacts();
  }, [commands, completed]);

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
                    <span className="visually-hidden">Download</span>
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
