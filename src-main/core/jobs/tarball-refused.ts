/**
 * Why an uploaded or stored artifact is not taken (tarball-inspect.ts, tar-headers.ts): the member it is about
 * when there is one, named in the message as tar readers would unpack it.
 */
export class TarballRefusedError extends Error {
  /**
   * @param stopsUpload whether an upload is cut off at once (a bad member, a gzip bomb) rather than answered
   *   after its size and sha256 are checked (bytes that are no tarball at all: they may just have been damaged
   *   on the way, which the sha256 says better).
   */
  constructor(
    readonly member: string | null,
    readonly reason: string,
    readonly stopsUpload: boolean = member !== null,
  ) {
    super(member === null ? `the artifact is not a tarball GPU Share accepts: ${reason}` : `the artifact's member "${member.slice(0, 300)}" ${reason}`);
    this.name = 'TarballRefusedError';
  }
}
