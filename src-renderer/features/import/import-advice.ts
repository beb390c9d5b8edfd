/**
 * What the cluster import's problem panel tells a person to do (issue 25 item 8): a broken cluster file is fixed
 * and dropped again, but a file that is no cluster file at all (a training script, a notebook) is not "fixed":
 * it is named as the wrong kind, with where that kind of file goes instead.
 */

/** Is `fileName` a YAML file by its name (a cluster file), or one without an extension (maybe one)? */
function looksLikeClusterFile(fileName: string): boolean {
  const dot = fileName.lastIndexOf('.');
  if (dot <= 0) return true;
  return /^\.(ya?ml)$/i.test(fileName.slice(dot));
}

/** The sentence under the errors of a refused import of `fileName`. */
export function importAdvice(fileName: string): string {
  if (looksLikeClusterFile(fileName)) return 'The cluster was not changed. Fix the file and drop it again.';
  const ext = fileName.slice(fileName.lastIndexOf('.')).toLowerCase();
  const script = ext === '.py' || ext === '.ipynb' || ext === '.sh';
  return (
    `The cluster was not changed: ${fileName} is not a cluster file. Drop a cluster file (.yaml) here to import it, or a job manifest (.toml) to submit it` +
    (script ? '; a training script is started from Runs → Start run (or gpu-share runs start -- SCRIPT).' : '.')
  );
}
