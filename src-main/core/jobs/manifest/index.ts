/** The job manifest: parsing (with every error placed) and job ids. Problems print with the CLI's formatManifestIssue. */
export { parseManifest, parseManifestSteps, MAX_MANIFEST_BYTES, MAX_MANIFEST_ERRORS, MAX_MANIFEST_HOSTS, MAX_MANIFEST_JOBS } from './parse-manifest';
export { jobId, manifestJobs, canonicalDefinition } from './job-id';
