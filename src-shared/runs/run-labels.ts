/**
 * A run's tags and note (issue 25, "compare runs"): what a person writes on a run to find and compare it later.
 * Bounded, so a run's record stays small: at most MAX_TAGS tags of at most MAX_TAG_CHARS characters from
 * TAG_PATTERN's set, and a note of at most MAX_NOTE_CHARS. The coordinator, the CLI and the run page all check
 * with these functions, so each refuses the same input with the same words.
 */
import { z } from 'zod';

export const MAX_TAGS = 16;
export const MAX_TAG_CHARS = 32;
export const MAX_NOTE_CHARS = 2000;
/** Letters, digits, dot, underscore and dash: safe in a shell, an address and a file name. */
export const TAG_PATTERN = /^[A-Za-z0-9._-]+$/;

/** A change to a run's labels: tags added and removed (added first), and the note replaced when given. */
export interface RunLabelChange {
  addTags?: string[];
  removeTags?: string[];
  note?: string;
}

/**
 * The body of a label change as the API and IPC take it: loosely bounded here (how much is read at all); the
 * limits a person meets are applyLabelChange's, whose refusals name them.
 */
export const runLabelChangeSchema = z
  .object({
    addTags: z.array(z.string().max(1000)).max(256).optional(),
    removeTags: z.array(z.string().max(1000)).max(256).optional(),
    note: z.string().max(100_000).optional(),
  })
  .strict();

export interface RunLabels {
  tags: string[];
  note: string;
}

/** Why `tag` cannot be a tag, or null when it can. */
export function tagProblem(tag: string): string | null {
  const shown = JSON.stringify(tag.length > 40 ? `${tag.slice(0, 40)}…` : tag);
  if (tag.length === 0) return 'a tag cannot be empty';
  if (tag.length > MAX_TAG_CHARS) return `tag ${shown} is ${tag.length} characters: a tag has at most ${MAX_TAG_CHARS}`;
  if (!TAG_PATTERN.test(tag)) return `tag ${shown} has characters a tag cannot have: use letters, digits, ".", "_" and "-" only`;
  return null;
}

/** Why `note` cannot be a note, or null when it can. */
export function noteProblem(note: string): string | null {
  return note.length > MAX_NOTE_CHARS ? `the note is ${note.length} characters: a run's note has at most ${MAX_NOTE_CHARS}` : null;
}

/** The labels after `change`, or the first thing wrong with it (nothing is applied then). Tags keep their order, each once. */
export function applyLabelChange(current: RunLabels, change: RunLabelChange): { labels: RunLabels } | { problem: string } {
  for (const tag of [...(change.addTags ?? []), ...(change.removeTags ?? [])]) {
    const problem = tagProblem(tag);
    if (problem) return { problem };
  }
  if (change.note !== undefined) {
    const problem = noteProblem(change.note);
    if (problem) return { problem };
  }
  const removed = new Set(change.removeTags ?? []);
  const tags = [...current.tags];
  for (const tag of change.addTags ?? []) if (!tags.includes(tag)) tags.push(tag);
  const kept = tags.filter((t) => !removed.has(t));
  if (kept.length > MAX_TAGS) return { problem: `a run has at most ${MAX_TAGS} tags: this would give it ${kept.length}; remove some first` };
  return { labels: { tags: kept, note: change.note === undefined ? current.note : change.note.trim() } };
}
