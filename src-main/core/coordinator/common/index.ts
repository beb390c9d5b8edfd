/**
 * The coordinator's shared vocabulary, imported by every part (membership, links, runs, service) and importing
 * none of them: the API problem, the change feed, what is said to people, the store port and the job seam.
 */
export { ApiProblem, isApiProblem, type ApiProblemStatus } from './api-problem';
export { ChangeFeed, PROGRESS_EMIT_MS, type CoordinatorChange, type FeedSources } from './change-feed';
export type { CoordinatorStore, RestoredState, StoredRun, StoredWorker } from './coordinator-store';
export type { CoordinatorJobHooks, Instruction, JobCapacity } from './job-hooks';
export { capitalize, describeExit, describeExitStatus, MAX_EVENTS, plural, UserMessages, type EventContext } from './user-messages';
