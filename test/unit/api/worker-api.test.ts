// The worker-API table: every path a builder makes is matched by its own pattern (and no other entry's of
// the same method), and the parameters come back out of it.
import { describe, expect, it } from 'vitest';
import { workerApi, type EndpointName } from '../../../src-shared/worker-api';

const samples: Record<EndpointName, unknown[]> = {
  health: [],
  joinChallenge: [],
  join: [],
  rotateJoinToken: [],
  heartbeat: [7],
  report: [7],
  leave: [7],
  presence: [7],
  drain: [7],
  acceptNodeKey: ['gpu-box.lan_1'],
  approveNode: ['gpu-box.lan_1'],
  revokeNode: ['gpu-box.lan_1'],
  forgetNode: ['gpu-box.lan_1'],
  state: [],
  measureLinks: [],
  listRuns: [],
  startRun: [],
  run: ['run 1/ä'],
  runOutput: ['run 1/ä'],
  runSeries: ['run 1/ä'],
  clusterHistory: [],
  stopRun: ['run 1/ä'],
  deleteRun: ['run 1/ä'],
  labelRun: ['run 1/ä'],
  metrics: [],
  jobStarted: [7, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
  jobOutput: [7, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
  jobComplete: [7, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
  jobFail: [7, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
  uploadArtifact: [7, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'],
  jobsState: [],
  submitManifest: [],
  job: ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
  jobLog: ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
  cancelJob: ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
  requeueJob: ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
  deleteJob: ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
  listArtifacts: [],
  downloadArtifact: ['bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'],
  deleteArtifact: ['cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc'],
  setArtifactRetention: [],
  projectManifest: [7, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
  projectBlob: [7, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'],
  uploadRunArtifact: [7, 'run 1/ä', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'],
  runArtifact: ['run 1/ä'],
};

describe('workerApi', () => {
  it('each builder makes a path its pattern matches, with the parameters in its groups', () => {
    for (const name of Object.keys(workerApi) as EndpointName[]) {
      const endpoint = workerApi[name];
      const params = samples[name];
      const path = (endpoint.path.build as (...p: unknown[]) => string)(...params);
      const match = endpoint.path.pattern.exec(path);
      expect(match, `${name}: ${path}`).not.toBeNull();
      expect(match!.slice(1).map(decodeURIComponent), name).toEqual(params.map(String));
    }
  });

  it('no two entries answer the same method and path', () => {
    const names = Object.keys(workerApi) as EndpointName[];
    for (const a of names) {
      const path = (workerApi[a].path.build as (...p: unknown[]) => string)(...samples[a]);
      const clash = names.filter((b) => b !== a && workerApi[b].method === workerApi[a].method && workerApi[b].path.pattern.test(path));
      expect(clash, `${a}: ${path}`).toEqual([]);
    }
  });

  it('worker requests after the join need the session; the operator reads need the operator token', () => {
    expect(workerApi.join.auth).toBe('join-proof');
    for (const name of ['heartbeat', 'report', 'leave', 'presence'] as const) expect(workerApi[name].auth).toBe('session');
    for (const name of ['state', 'listRuns', 'startRun', 'run', 'runOutput', 'runSeries', 'stopRun', 'labelRun', 'deleteRun', 'deleteJob', 'drain', 'acceptNodeKey', 'approveNode', 'revokeNode', 'metrics', 'measureLinks'] as const) expect(workerApi[name].auth).toBe('operator');
    expect(workerApi.health.auth).toBe('none');
    for (const name of ['jobStarted', 'jobOutput', 'jobComplete', 'jobFail', 'uploadArtifact'] as const) expect(workerApi[name].auth).toBe('session');
    for (const name of ['jobsState', 'submitManifest', 'job', 'jobLog', 'cancelJob', 'requeueJob', 'listArtifacts', 'downloadArtifact', 'deleteArtifact', 'setArtifactRetention'] as const) expect(workerApi[name].auth).toBe('operator');
  });
});
