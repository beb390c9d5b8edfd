/**
 * The coordinator as the rest of the app sees it: the CoordinatorService facade that composes membership, links
 * and runs, its options, and the cluster history and notification coalescing the app wires beside it.
 */
export { ClusterHistoryBook } from './cluster-history-book';
export { CoordinatorService, type CoordinatorChange } from './coordinator-service';
export type { CoordinatorServiceOptions } from './coordinator-service-options';
export { NotificationCoalescer } from './notification-coalescer';
