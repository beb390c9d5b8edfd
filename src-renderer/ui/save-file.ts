/**
 * Saving what the page holds or fetched as a file the browser downloads (a run's log, an output tarball, the
 * exported cluster.yaml): one way for every view, the same in the desktop window and a browser tab.
 */
export function saveFile(data: BlobPart, fileName: string, type: string): void {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  // Revoked later, not at once: some browsers start reading the blob only after the click returns.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
