/**
 * Reads cluster.yaml into a ClusterConfig, field by field from the YAML tree (never through a generic
 * YAML→object conversion), so a key such as `__proto__` is only ever a name to warn about, each value is
 * checked with its line and column at hand, and aliases are expanded under a budget.
 */
import { formatPath } from './format-issue';
import { readCluster } from './read-nodes';
import { MAX_LISTED_ISSUES, readYamlDocument } from './read-yaml';
import type { ClusterConfig, ClusterIssue, ClusterParseResult } from './types';
import { validateCluster } from './validate';
import { AliasBudgetExceeded, Reader, TooManyErrors } from './yaml-reader';

/** Keeps the first MAX_LISTED_ISSUES issues and says how many more there were (`alsoUnlisted` were never kept). */
function capIssues(issues: ClusterIssue[], severity: 'error' | 'warning', alsoUnlisted = 0): ClusterIssue[] {
  const more = Math.max(0, issues.length - MAX_LISTED_ISSUES) + alsoUnlisted;
  if (more === 0) return issues;
  const kept = issues.slice(0, MAX_LISTED_ISSUES);
  kept.push({ severity, message: `… and ${more} more ${severity}s not listed`, path: [] });
  return kept;
}

/**
 * Errors sorted by where they are in the file, as a compiler lists them; those without a place keep their
 * order at the end. (validateCluster alone keeps entrenar's rule order.)
 */
function inFileOrder(issues: ClusterIssue[]): ClusterIssue[] {
  const placed = issues.filter((i) => i.line !== undefined);
  const unplaced = issues.filter((i) => i.line === undefined);
  placed.sort((a, b) => a.line! - b.line! || (a.col ?? 0) - (b.col ?? 0));
  return [...placed, ...unplaced];
}

/** Attaches line:col to a validation issue from the path it names, or from its nearest located ancestor. */
function locate(r: Reader, issue: ClusterIssue): ClusterIssue {
  const offset = r.offsetAtPath(issue.path);
  return offset === undefined ? issue : { ...issue, ...r.pos(offset) };
}

function isUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);
}

/**
 * Parses and validates cluster.yaml text. Never throws. Errors and warnings carry 1-based line:col where
 * the place is known; unknown keys are warnings. `ok` is true only when there are no errors at all.
 */
export function parseClusterYaml(text: string): ClusterParseResult {
  const read = readYamlDocument(text);
  if (!read.ok) return { ok: false, errors: capIssues(read.errors, 'error'), warnings: capIssues(read.warnings, 'warning') };
  const r = new Reader(read.lineCounter);
  let config: ClusterConfig | null;
  try {
    r.prepare(read.doc);
    config = r.errors.length > 0 ? null : readCluster(r, read.doc.contents);
  } catch (caught) {
    config = null;
    if (caught instanceof AliasBudgetExceeded) {
      // This is the cause; anything found while expanding is noise, so it replaces them.
      r.errors.length = 0;
      r.errors.push({
        severity: 'error',
        message:
          'aliases (*name) here expand into far more data than the file holds; a cluster.yaml may reuse small blocks, not multiply them — write the entries out',
        path: caught.path,
        ...r.pos(caught.offset),
      });
    } else if (caught instanceof TooManyErrors) {
      const listed = inFileOrder(r.errors).slice(0, MAX_LISTED_ISSUES);
      listed.push({ severity: 'error', message: `… reading stopped after ${MAX_LISTED_ISSUES} errors; fix these first`, path: [] });
      return { ok: false, errors: listed, warnings: capIssues([...read.warnings, ...r.warnings], 'warning', r.unlistedWarnings) };
    } else {
      // Not expected; reported rather than thrown because a dropped file must never take the app down.
      const why = caught instanceof Error ? caught.message : String(caught);
      r.errors.push({ severity: 'error', message: `cluster.yaml could not be read: ${why}`, path: [] });
    }
  }
  const warnings = capIssues([...read.warnings, ...r.warnings], 'warning', r.unlistedWarnings);
  if (config) {
    for (const problem of validateCluster(config)) {
      const p = formatPath(problem.path);
      if (r.broken.some((b) => isUnder(p, b))) continue;
      r.errors.push(locate(r, problem));
    }
  }
  if (r.errors.length > 0 || !config) return { ok: false, errors: capIssues(inFileOrder(r.errors), 'error'), warnings };
  return { ok: true, config, warnings };
}
