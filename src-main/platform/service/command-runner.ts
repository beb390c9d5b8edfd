/**
 * How the install steps run systemctl, launchctl, schtasks and loginctl: through a function passed in, so tests
 * run every step on a machine without systemd (or on Linux for macOS and Windows) and see exactly what was run.
 */
import { execFile } from 'node:child_process';

export interface CommandResult {
  /** The exit code; null when the program could not be started (not installed) or was killed. */
  code: number | null;
  stdout: string;
  stderr: string;
}

export type RunCommand = (file: string, args: readonly string[]) => Promise<CommandResult>;

const TIMEOUT_MS = 60_000;

/** The real one: execFile (no shell), 60 s at most, output as text. */
export const execCommand: RunCommand = (file, args) =>
  new Promise((resolve) => {
    execFile(file, [...args], { timeout: TIMEOUT_MS, encoding: 'utf8', windowsHide: true }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as NodeJS.ErrnoException).code === 'number' ? Number((error as NodeJS.ErrnoException).code) : null) : 0;
      const missing = (error as NodeJS.ErrnoException | null)?.code === 'ENOENT' ? `${file}: not found on the PATH` : '';
      resolve({ code, stdout: String(stdout), stderr: missing || String(stderr) });
    });
  });

/** The command as a person would type it, for messages. */
export function commandLine(file: string, args: readonly string[]): string {
  return [file, ...args].map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}
