/**
 * An XDG base-directory variable (XDG_CONFIG_HOME, …) read as the spec says: not set or empty means the default
 * (`$HOME/.config` for XDG_CONFIG_HOME), and a relative path is invalid and ignored. Without this, `worker
 * install` with `XDG_CONFIG_HOME=""` wrote its unit, token file and data folder relative to wherever it ran.
 */
import path from 'node:path';

/** `value` when it is an absolute path, else `fallback`. POSIX rules: XDG is for Linux (and other Unixes). */
export function xdgBaseDir(value: string | undefined, fallback: string): string {
  return value && path.posix.isAbsolute(value) ? value : fallback;
}
