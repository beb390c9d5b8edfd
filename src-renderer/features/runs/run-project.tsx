/**
 * A run's project and output on its page (issue 23): the snapshot it trains from (short hash, the whole on hover
 * and copy; files and size; data folder and mode; the modules checked; the coordinator's notes such as "unchanged
 * since run r2"), where each member stands with it (fetching with its progress, ready, failed with the reason), and
 * Download output once rank 0's output folder came back (marked partial when the run did not finish).
 */
import type { RunArtifact, RunProject, RunSnapshot } from '../../../src-shared/training';
import { useApp } from '../../store/app-store';
import { isRunLive } from '../../store/derive';
import { Badge } from '../../ui/badge';
import { DownloadIcon } from '../../ui/icons';
import { formatBytes } from '../jobs/job-format';
import { useRunCommands } from './use-run-commands';
import { dataText, fetchedFraction, memberBadge, outputFileName, snapshotSizeText } from './run-project-model';
import { saveBytes, ShaCell } from '../../ui/sha-cell';

function ProjectMembers({ project }: { project: RunProject }) {
  if (project.members.length === 0) return <p className="muted small">No member was asked to get it ready yet.</p>;
  return (
    <ul className="project-members" data-testid="run-project-members">
      {project.members.map((m) => {
        const fraction = fetchedFraction(m);
        return (
          <li key={m.workerId} data-worker-id={m.workerId} data-status={m.status}>
            <span className="strong">{m.node}</span>
            <Badge badge={memberBadge(m)} />
            {fraction !== null && <progress max={1} value={fraction} aria-label={`${m.node} fetching the project`} />}
            <span className={`small${m.status === 'failed' ? ' field-error' : ' muted'}`}>{m.detail}</span>
          </li>
        );
      })}
    </ul>
  );
}

function ProjectFacts({ project }: { project: RunProject }) {
  return (
    <>
      <dl className="run-settings" data-testid="run-project">
        <div className="run-setting">
          <dt>Snapshot</dt>
          <dd data-testid="run-project-snapshot" data-snapshot={project.snapshot}>
            <ShaCell sha256={project.snapshot} />
          </dd>
        </div>
        <div className="run-setting">
          <dt>Folder</dt>
          <dd className="mono project-dir" title={project.dir}>
            {project.dir}
          </dd>
        </div>
        <div className="run-setting">
          <dt>Files</dt>
          <dd data-testid="run-project-size">{snapshotSizeText(project)}</dd>
        </div>
        <div className="run-setting">
          <dt>Data</dt>
          <dd data-testid="run-project-data">{dataText(project)}</dd>
        </div>
        <div className="run-setting">
          <dt>Python modules checked</dt>
          <dd className={project.modules.length ? 'mono' : undefined}>{project.modules.length ? project.modules.map((m) => m.module).join(', ') : 'none'}</dd>
        </div>
      </dl>
      {project.notes.length > 0 && (
        <ul className="project-notes small" data-testid="run-project-notes">
          {project.notes.map((note) => (
            <li key={note}>{note}</li>
          ))}
        </ul>
      )}
      <h4 className="small strong project-members-title">On each member</h4>
      <ProjectMembers project={project} />
    </>
  );
}

function DownloadOutput({ run, artifact }: { run: RunSnapshot; artifact: RunArtifact }) {
  const commands = useRunCommands();
  const busy = useApp((s) => s.busy.includes(`run-artifact:${run.id}`));
  const fileName = outputFileName(run.spec.name, artifact);
  const download = async () => {
    const bytes = await commands.fetchRunArtifact(run.id, artifact.sha256);
    if (bytes) saveBytes(bytes, fileName);
  };
  return (
    <div className="run-output-artifact" data-testid="run-artifact" data-partial={artifact.partial} data-sha256={artifact.sha256}>
      <button type="button" className="button primary" disabled={busy} onClick={() => void download()} aria-label={`Download output ${fileName}`}>
        <DownloadIcon /> {busy ? 'Downloading…' : 'Download output'}
      </button>
      <span className="small">
        {formatBytes(artifact.sizeBytes)} · rank 0 on {artifact.node} · <ShaCell sha256={artifact.sha256} />
      </span>
      {artifact.partial && (
        <span className="badge tone-warn" data-testid="run-artifact-partial" title="The run was stopped or failed: this is what rank 0 had written by then">
          <span className="badge-dot" aria-hidden="true" />
          Partial: the run did not finish
        </span>
      )}
    </div>
  );
}

export function RunProjectCard({ run }: { run: RunSnapshot }) {
  const project = run.project ?? null;
  const artifact = run.artifact ?? null;
  if (!project && !artifact) return null;
  return (
    <section className="card" aria-labelledby="run-project-title" data-testid="run-project-card">
      <h3 id="run-project-title" className="card-title">
        {project ? 'Project' : 'Output'} {project && <span className="muted small">· shipped to every member before it trains</span>}
      </h3>
      {project && <ProjectFacts project={project} />}
      {artifact ? (
        <DownloadOutput run={run} artifact={artifact} />
      ) : (
        <p className="muted small" data-testid="run-artifact-none">
          {isRunLive(run.state) ? 'Download output appears here when the run ends: what rank 0 writes to GPU_SHARE_OUTPUT_DIR comes back packed.' : 'No output: rank 0 wrote nothing to GPU_SHARE_OUTPUT_DIR.'}
        </p>
      )}
    </section>
  );
}
