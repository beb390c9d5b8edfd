/** The job commands for components, bound to the page's API and store (one set per API). */
import { useServices } from '../../app-context';
import { appStore } from '../../store/app-store';
import { jobCommandsFor, type JobCommands } from './jobs-commands';

export function useJobCommands(): JobCommands {
  return jobCommandsFor(useServices().api, appStore);
}
