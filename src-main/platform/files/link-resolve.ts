/**
 * Where a symbolic link really leads, worked out the way the operating system resolves it, not by reading its
 * text: a link's target is walked one name at a time, and every name that is itself a link is followed before
 * the next `..` is applied. So `t -> d/s/..` with `d/s -> ..` leads OUTSIDE the folder (d/s is the folder itself,
 * and its `..` is above it), although `d/s/..` read as text stays inside. The packer (its folder on disk) and the
 * coordinator's tarball inspection (the archive's entries) both decide with this one function.
 *
 * Pure: what exists where is asked of `lookup`, so the same rules hold for a folder and for an archive.
 */

/** What sits at a path relative to the root ("a/b"); null when nothing does. */
export type LinkLookup = (relPath: string) => { kind: 'link'; target: string } | { kind: 'dir' | 'file' | 'other' } | null;

/** Linux gives up after 40 links in one resolution (ELOOP); so does this. */
const MAX_LINKS = 40;

/** A link target that is absolute on any platform: /x, \x, C:x, C:\x, \\server\share. */
export function isAbsoluteLinkTarget(target: string): boolean {
  return target.startsWith('/') || target.startsWith('\\') || /^[a-zA-Z]:/.test(target);
}

/**
 * The path (relative to the root, "/"-separated, "" for the root itself) that the link at `linkPath` leads to,
 * or null when it leads outside the root, is absolute, or loops. Both "/" and "\" separate names, so a target
 * meant for Windows cannot hide a `..`. Names that do not exist are taken as they are (nothing there to follow).
 */
export function resolveLinkInside(linkPath: string, target: string, lookup: LinkLookup): string | null {
  let hops = 0;
  const walk = (base: string[], text: string): string[] | null => {
    if (text === '' || isAbsoluteLinkTarget(text)) return null;
    const parts = [...base];
    for (const name of text.split(/[\\/]/)) {
      if (name === '' || name === '.') continue;
      if (name === '..') {
        if (parts.length === 0) return null; // above the root
        parts.pop();
        continue;
      }
      parts.push(name);
      const found = lookup(parts.join('/'));
      if (found?.kind === 'link') {
        if (++hops > MAX_LINKS) return null;
        const resolved = walk(parts.slice(0, -1), found.target);
        if (resolved === null) return null;
        parts.splice(0, parts.length, ...resolved);
      }
    }
    return parts;
  };
  const base = linkPath.split(/[\\/]/).filter((n) => n !== '' && n !== '.');
  base.pop(); // the link's own name: its target is read from the folder it sits in
  const resolved = walk(base, target);
  return resolved === null ? null : resolved.join('/');
}
