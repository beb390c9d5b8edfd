/**
 * What install, uninstall and status ask of a platform's service manager (systemd, launchd, Task Scheduler):
 * register and start, stop and unregister, and say what it knows. Each step reports what it ran and, when it
 * could not, a sentence saying what to do by hand, so an install on a machine without a running manager (no
 * systemd as PID 1 in a container) still writes its files and says plainly how to start the worker.
 */
import { commandLine, type CommandResult, type RunCommand } from './command-runner';

export interface StepOutcome {
  ok: boolean;
  /** The commands run, as a person would type them. */
  ran: string[];
  /** What happened, or what to do by hand. */
  message: string;
}

export interface ManagerState {
  /** The manager is there and answered (systemd running as PID 1, launchctl, schtasks). */
  available: boolean;
  /** It has the worker registered to start by itself (enabled / loaded / a task). null: cannot tell. */
  enabled: boolean | null;
  /** It says the worker is running now. null: cannot tell. */
  active: boolean | null;
  /** One line in the manager's words (active (running), failed, Ready, …). */
  detail: string;
}

export interface ServiceManager {
  /** systemd, launchd, Task Scheduler. */
  name: string;
  enable(): Promise<StepOutcome>;
  disable(): Promise<StepOutcome>;
  /** After uninstall removed the files (systemd: daemon-reload). */
  forget(): Promise<StepOutcome>;
  state(): Promise<ManagerState>;
  /** How to start it by hand, when the manager is not there or refused. */
  startHint: string;
  /** How to see its state and its log. */
  logHint: string;
}

/** The last non-empty line of a failed command's output: what the manager said. */
export function said(result: CommandResult): string {
  const lines = `${result.stderr}\n${result.stdout}`.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.at(-1) ?? (result.code === null ? 'could not be run' : `exit code ${result.code}`);
}

/**
 * Runs commands through `run`, remembering each as typed; `step` ends a step with the commands it ran.
 */
export function stepRecorder(run: RunCommand) {
  const ran: string[] = [];
  return {
    run(file: string, args: string[]): Promise<CommandResult> {
      ran.push(commandLine(file, args));
      return run(file, args);
    },
    step(ok: boolean, message: string): StepOutcome {
      return { ok, ran: ran.splice(0), message };
    },
  };
}
