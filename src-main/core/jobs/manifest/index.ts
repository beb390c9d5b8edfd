/** The job manifest: parsing (with every error placed), job ids, and how problems are printed. */
export { parseManifest, MAX_MANIFEST_BYTES, MAX_MANIFEST_ERRORS, MAX_MANIFEST_HOSTS, MAX_MANIFEST_JOBS } from './parse-manifest';
export { jobId, manifestJobs, canonicalDefinition } from './job-id';
export { formatManifestIssue } from './format-issue';
