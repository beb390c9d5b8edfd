/**
 * Makes the whole window a drop target for cluster.yaml: an overlay appears while a file is dragged over the
 * page, and the dropped file goes to the import command. Drags of text or links are left alone.
 */
import { useEffect, useState } from 'react';
import { useCommands } from '../app-context';
import { UploadIcon } from './icons';

function carriesFiles(e: DragEvent): boolean {
  return !!e.dataTransfer && Array.from(e.dataTransfer.types).includes('Files');
}

export function DropZone() {
  const commands = useCommands();
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
      if (file) void commands.openClusterFile(file);
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
  }, [commands]);

  if (!over) return null;
  return (
    <div className="drop-overlay" data-testid="drop-overlay" aria-hidden="true">
      <div className="drop-card">
        <UploadIcon size={40} />
        <p className="drop-title">Drop cluster.yaml to import it</p>
        <p className="muted">It is checked first: an invalid file changes nothing.</p>
      </div>
    </div>
  );
}
