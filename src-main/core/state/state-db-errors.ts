/**
 * The two ways the state database refuses to open. Both name the file and say what to do; neither changes it.
 * (A file that is merely corrupt is not an error: it is moved aside and the app starts with empty state.)
 */

/** Something other than a regular file sits where state.db belongs (a FIFO, a directory, a device). */
export class StateDbPathError extends Error {
  constructor(
    readonly file: string,
    readonly kind: string,
  ) {
    super(
      `${file} is a ${kind}, not a regular file: GPU Share keeps its state in an SQLite file at that path. ` +
        'Move it out of the way (GPU Share then starts with empty state), or point --data-dir at another folder.',
    );
    this.name = 'StateDbPathError';
  }
}

/** The file was written by a newer GPU Share; opening it here would mean guessing at a schema this build has never seen. */
export class StateDbTooNewError extends Error {
  constructor(
    readonly file: string,
    readonly fileVersion: number,
    readonly knownVersion: number,
  ) {
    super(
      `${file} was written by a newer GPU Share (state schema ${fileVersion}; this one knows up to ${knownVersion}). ` +
        'It was left untouched: run the newer GPU Share, or move the file away to start this one with empty state.',
    );
    this.name = 'StateDbTooNewError';
  }
}
