/** The run commands for components, bound to the page's API and store (one set per API), like job-commands.ts. */
import { useServices } from '../../app-context';
import { appStore } from '../../store/app-store';
import { runCommandsFor, type RunCommands } from './run-commands';

export function useRunCommands(): RunCommands {
  return runCommandsFor(useServices().api, appStore);
}
