/**
 * Makes the whole window a drop target for cluster.yaml and job manifests: an overlay appears while a file is
 * dragged over the page; a .toml goes to the Jobs view's submit, anything else to the cluster import. Drags of
 * text or links are left alone.
 */
import { useEffect, useState } from 'react';
import { useCommands } from '../../app-context';
import { navigate } from '../../store/actions';
import { act } from '../../store/app-store';
import { UploadIcon } from '../../ui/icons';
import { useJobCommands } from '../jobs/use-job-commands';

function carriesFiles(e: DragEvent): boolean {
  return !!e.dataTransfer && Array.from(e.dataTransfer.types).includes('Files');
}

/** A job manifest is TOML; cluster.yaml is YAML (and stays the default for any other name). */
export function isManifestFile(name: string): boolean {
  return /\.toml$/i.test(name);
}

export function DropZone() {
  const commands = useCommands();
  const jobCommands = useJobCommands();
  const [over, setOver] = useState(false);

  useEffect(() => {
    // dragenter/dragleave fire for every child crossed; count them so the overlay does not flicker.
    let depth = 0;
    const onEnter = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      depth++;
      setOver(true);
    };
    const onOver = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    };
    const onLeave = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setOver(false);
    };
    const onDrop = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      depth = 0;
      setOver(false);
      const file = e.dataTransfer?.files[0];
      if (!file) return;
      if (isManifestFile(file.name)) {
        act(navigate, 'jobs');
        void jobCommands.submitManifestFile(file);
      } else {
        void commands.openClusterFile(file);
      }
    };
    window.addEventListener('dragenter', onEnter);
    window.addEventListener('dragover', onOver);
    window.addEventListener('dragleave', onLeave);
    window.addEventListener('drop', onDrop);
    return () => {
      window.removeEventListener('dragenter', onEnter);
      window.removeEventListener('dragover', onOver);
      window.removeEventListener('dragleave', onLeave);
      window.removeEventListener('drop', onDrop);
    };
  }, [commands, jobCommands]);

  if (!over) return null;
  return (
    <div className="drop-overlay" data-testid="drop-overlay" aria-hidden="true">
      <div className="drop-card">
        <UploadIcon size={40} />
        <p className="drop-title">Drop cluster.yaml to import it, or a job manifest (.toml) to submit it</p>
        <p className="muted">It is checked first: an invalid file changes nothing.</p>
      </div>
    </div>
  );
}
