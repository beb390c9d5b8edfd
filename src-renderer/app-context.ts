/** Hands the commands (and the API, for the terminal) to components without a global. */
import { createContext, useContext } from 'react';
import type { GpuShareApi } from '../src-shared/ipc';
import type { Commands } from './commands';

export interface AppServices {
  api: GpuShareApi;
  commands: Commands;
  /** True when the page runs in the desktop app (native notifications are the shell's job there). */
  inElectron: boolean;
}

export const ServicesContext = createContext<AppServices | null>(null);

export function useServices(): AppServices {
  const services = useContext(ServicesContext);
  if (!services) throw new Error('useServices() outside <ServicesContext.Provider>');
  return services;
}

export function useCommands(): Commands {
  return useServices().commands;
}
