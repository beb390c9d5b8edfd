/**
 * The artifact store's bound on data that no job refers to. An upload is kept before the job that made it
 * completes (the worker PUTs, then reports done), so for a while every stored tarball is outside the artifact
 * index, and a worker holding a claim could fill the disk by uploading distinct tarballs and never completing.
 * So uploads are remembered per claim (a job's attempt): a new upload under the same claim replaces the one
 * before it, an upload whose completion never comes is removed after a grace, and so is one found on disk at
 * start that the index does not know. A tarball is never removed while the index, another claim's latest
 * upload or an upload in progress still holds those bytes, and nothing is removed at all until the index is
 * known (useIndex).
 */

export interface PendingUpload {
  sha256: string;
  /** When it was stored (ms). */
  at: number;
}

export class UnindexedUploads {
  private readonly byClaim = new Map<string, PendingUpload>();
  /** Tarballs found on disk at start that the index did not know, by sha256, with their file time. */
  private readonly orphans = new Map<string, number>();
  private readonly receiving = new Map<string, number>();
  private isIndexed: ((sha256: string) => boolean) | null = null;

  constructor(
    private readonly graceMs: number,
    private readonly remove: (sha256: string) => void,
  ) {}

  /** Tells which tarballs the artifact index refers to; those are never removed here. */
  useIndex(isIndexed: (sha256: string) => boolean): void {
    this.isIndexed = isIndexed;
  }

  /** Bytes of this sha256 are being received (so a file of that name must not be removed meanwhile). */
  receivingStarted(sha256: string): void {
    this.receiving.set(sha256, (this.receiving.get(sha256) ?? 0) + 1);
  }

  isReceiving(sha256: string): boolean {
    return this.receiving.has(sha256);
  }

  receivingEnded(sha256: string): void {
    const left = (this.receiving.get(sha256) ?? 1) - 1;
    if (left > 0) this.receiving.set(sha256, left);
    else this.receiving.delete(sha256);
  }

  /** A claim's upload was stored: it replaces that claim's previous one, which is removed unless held. */
  stored(claim: string, upload: PendingUpload): void {
    const previous = this.byClaim.get(claim);
    // Bytes found on disk unindexed are this claim's to answer for now.
    this.orphans.delete(upload.sha256);
    this.byClaim.set(claim, upload);
    if (previous && previous.sha256 !== upload.sha256) this.removeUnlessHeld(previous.sha256);
  }

  /** The claim's upload is in the index now (its job completed): no longer this bound's business. */
  indexed(claim: string): void {
    this.byClaim.delete(claim);
  }

  /** Tarballs on disk at start that the index does not know: removed once `at` + grace has passed. */
  foundOnDisk(sha256: string, at: number): void {
    if (!this.isIndexed?.(sha256)) this.orphans.set(sha256, at);
  }

  /** Removes uploads older than the grace that no completion indexed; returns how many files went. */
  sweep(now: number): number {
    let removed = 0;
    for (const [claim, upload] of this.byClaim) {
      if (now - upload.at < this.graceMs) continue;
      this.byClaim.delete(claim);
      if (this.removeUnlessHeld(upload.sha256)) removed++;
    }
    for (const [sha256, at] of this.orphans) {
      if (now - at < this.graceMs) continue;
      this.orphans.delete(sha256);
      if (this.removeUnlessHeld(sha256)) removed++;
    }
    return removed;
  }

  /** Claims with an upload not yet indexed (for tests and figures). */
  get pending(): number {
    return this.byClaim.size + this.orphans.size;
  }

  private removeUnlessHeld(sha256: string): boolean {
    if (!this.isIndexed || this.isIndexed(sha256) || this.receiving.has(sha256)) return false;
    for (const upload of this.byClaim.values()) if (upload.sha256 === sha256) return false;
    if (this.orphans.has(sha256)) return false;
    this.remove(sha256);
    return true;
  }
}
