/**
 * A run's tags and note on its page (issue 25, "compare runs"): each tag with a button that takes it off, a field
 * that adds one (Enter), and the note with Save. Checked here with the coordinator's own rules
 * (src-shared/runs/run-labels.ts), so a wrong tag is named at the field before anything is sent.
 */
import { useId, useState, type FormEvent } from 'react';
import { MAX_NOTE_CHARS, MAX_TAGS, noteProblem, tagProblem } from '../../../src-shared/runs/run-labels';
import type { RunSnapshot } from '../../../src-shared/training';
import { useApp } from '../../store/app-store';
import { useRunCommands } from './use-run-commands';

function TagEditor({ run }: { run: RunSnapshot }) {
  const id = useId();
  const commands = useRunCommands();
  const [draft, setDraft] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const tags = run.tags ?? [];
  const add = async (e: FormEvent) => {
    e.preventDefault();
    const tag = draft.trim();
    const wrong = tagProblem(tag) ?? (tags.length >= MAX_TAGS && !tags.includes(tag) ? `a run has at most ${MAX_TAGS} tags: remove one first` : null);
    setProblem(wrong);
    if (wrong) return;
    if (await commands.labelRun(run.id, { addTags: [tag] })) setDraft('');
  };
  return (
    <form className={`run-tag-editor${problem ? ' invalid' : ''}`} onSubmit={(e) => void add(e)} data-testid="run-tag-editor">
      <span className="run-tags">
        {tags.length === 0 && <span className="muted small">No tags.</span>}
        {tags.map((t) => (
          <span key={t} className="chip chip-accent run-tag" data-tag={t}>
            {t}
            <button type="button" className="run-tag-remove" aria-label={`Remove tag ${t}`} onClick={() => void commands.labelRun(run.id, { removeTags: [t] })}>
              ×
            </button>
          </span>
        ))}
      </span>
      <label htmlFor={`${id}-tag`} className="visually-hidden">
        Add a tag
      </label>
      <input
        id={`${id}-tag`}
        className="run-tag-input"
        placeholder="add a tag"
        value={draft}
        maxLength={64}
        onChange={(e) => setDraft(e.target.value)}
        aria-invalid={problem ? 'true' : undefined}
        aria-describedby={problem ? `${id}-problem` : undefined}
        data-testid="run-tag-input"
      />
      <button type="submit" className="button small" disabled={draft.trim() === ''}>
        Add
      </button>
      {problem && (
        <p id={`${id}-problem`} className="small run-label-problem" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}

/**
 * The note as the person edits it. A note changed elsewhere (the CLI, another tab) replaces the field while the person
 * has not edited it; an edit in progress is kept, and the field says the note changed, offering the new one.
 */
function NoteEditor({ run }: { run: RunSnapshot }) {
  const id = useId();
  const commands = useRunCommands();
  const saving = useApp((s) => s.busy.includes(`label:${run.id}`));
  const note = run.note ?? '';
  const [draft, setDraft] = useState(note);
  // The note the draft began from: the draft is an edit in progress when it differs from it.
  const [base, setBase] = useState(note);
  if (note !== base && (draft.trim() === base.trim() || draft.trim() === note)) {
    // Not edited (or this is the person's own save coming back): take the note as it is now.
    setBase(note);
    setDraft(note);
  }
  const changedElsewhere = note !== base;
  const problem = noteProblem(draft);
  const changed = draft.trim() !== note;
  const useNew = () => {
    setBase(note);
    setDraft(note);
  };
  return (
    <form
      className="run-note-editor"
      onSubmit={(e) => {
        e.preventDefault();
        if (!problem) void commands.labelRun(run.id, { note: draft });
      }}
    >
      <div className={`field run-note-field${problem ? ' invalid' : ''}`}>
        <label htmlFor={`${id}-note`}>
          Note <span className="muted">· {draft.length} of {MAX_NOTE_CHARS}</span>
        </label>
        <textarea
          id={`${id}-note`}
          rows={2}
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          placeholder="What this run tried, what came of it"
          aria-invalid={problem ? 'true' : undefined}
          aria-describedby={changedElsewhere ? `${id}-elsewhere` : undefined}
          data-testid="run-note-input"
        />
      </div>
      {changedElsewhere && (
        <p id={`${id}-elsewhere`} className="small warning-text" role="status" data-testid="run-note-elsewhere">
          The note was changed elsewhere while you edited it{note ? ` (now: “${note.length > 80 ? `${note.slice(0, 80)}…` : note}”)` : ' (now empty)'}. Your text is kept: Save replaces it.{' '}
          <button type="button" className="button small ghost" onClick={useNew}>
            Use the new note
          </button>
        </p>
      )}
      {problem && (
        <p className="small run-label-problem" role="alert">
          {problem}
        </p>
      )}
      <button type="submit" className="button small" disabled={!changed || problem !== null || saving} data-testid="run-note-save">
        Save note
      </button>
    </form>
  );
}

export function RunLabels({ run }: { run: RunSnapshot }) {
  return (
    <section className="card run-labels" aria-labelledby="run-labels-title" data-testid="run-labels">
      <h3 id="run-labels-title" className="card-title">
        Tags and note
      </h3>
      <TagEditor run={run} />
      <NoteEditor key={run.id} run={run} />
    </section>
  );
}
