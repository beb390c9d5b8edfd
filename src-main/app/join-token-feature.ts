/**
 * The join command the Workers view's "Add a worker" panel shows (the one-off worker and the same join installed
 * as a service, `worker install`), and its "Replace join token" button: a rotation
 * makes a new join token, keeps the replaced one for the machines already approved (their agents hold it), and
 * the coordinator takes the new one at once (secrets.ts, docs/api.md "Joining"). app-core.ts spreads the handlers.
 */
import type { RequestHandlers } from '../../src-shared/ipc';
import type { CoordinatorInfo } from '../../src-shared/training';
import { rotateJoinToken, type ClusterSecrets } from './secrets';

export interface JoinTokenFeatureOptions {
  userData: string;
  /** Changed in place by a rotation. */
  secrets: ClusterSecrets;
  /** The URL other machines join (the LAN address when bound to every interface). */
  coordinatorUrl: string;
  certSha256: string | null;
  bindHost: string;
  port: number;
  loopbackOnly: boolean;
}

export function createJoinTokenFeature(opts: JoinTokenFeatureOptions): { handlers: Pick<RequestHandlers, 'getCoordinatorInfo' | 'rotateJoinToken'> } {
  const info = (): CoordinatorInfo => ({
    url: opts.coordinatorUrl,
    joinToken: opts.secrets.joinToken,
    joinCommand: `GPU_SHARE_JOIN_TOKEN=${opts.secrets.joinToken} gpu-share worker --join ${opts.coordinatorUrl}${opts.certSha256 ? ` --cert-sha256 ${opts.certSha256}` : ''}`,
    installCommand: `GPU_SHARE_JOIN_TOKEN=${opts.secrets.joinToken} gpu-share worker install --join ${opts.coordinatorUrl}${opts.certSha256 ? ` --cert-sha256 ${opts.certSha256}` : ''}`,
    certSha256: opts.certSha256,
    reachableFromOtherMachines: !opts.loopbackOnly,
    reachability: opts.loopbackOnly
      ? `The coordinator listens on ${opts.bindHost} only, so only workers on this machine can join. To let your other machines join, start GPU Share with --coordinator-host 0.0.0.0 (or this machine's LAN address).`
      : `The coordinator listens on ${opts.bindHost}:${opts.port} over HTTPS; any machine that can reach ${opts.coordinatorUrl} and has the token can join, and the fingerprint in the command lets it check it reached this machine.`,
  });
  return {
    handlers: {
      getCoordinatorInfo: async () => info(),
      rotateJoinToken: async () => {
        await rotateJoinToken(opts.userData, opts.secrets);
        return info();
      },
    },
  };
}
