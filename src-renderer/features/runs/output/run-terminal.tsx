/**
 * A run's live output in xterm.js. The store holds the text (fetched once, then appended from events) as whole
 * lines prefixed by machine; the terminal colours them, shows what the filter keeps (one machine, progress lines
 * hidden, a search), writes only what is new since its last write, and starts over when the buffer was replaced,
 * the filter changed, or a relaunch turned lines already shown into expected ones (they are drawn faint).
 * Read-only, and no keyboard trap: Tab and Shift+Tab leave it like any other control.
 */
import { useEffect, useRef, useState } from 'react';
import { Terminal, type ITheme } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import { useApp } from '../../../store/app-store';
import { useRunCommands } from '../use-run-commands';
import type { OutputFilter } from '../../../../src-shared/runs/output-lines';
import { renderOutput } from './run-output-format';
import { CLOCK_WIDTH, clockTime, lineStamper } from '../../../../src-shared/runs/line-time';

const LIGHT: ITheme = { background: '#fbfcfd', foreground: '#1f2328', cursor: '#1f2328', selectionBackground: '#b6d3ff' };
const DARK: ITheme = { background: '#0b0e12', foreground: '#d6dde6', cursor: '#d6dde6', selectionBackground: '#264f78' };
/** The coordinator's own lines, in a colour no worker has (the worker palette has no violet this deep). */
const COORDINATOR_LIGHT = '#6f42c1';
const COORDINATOR_DARK = '#c9a7ff';

function darkQuery(): MediaQueryList | null {
  return typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
}

export interface RunTerminalProps {
  runId: string;
  /** Which lines to show (one machine's, progress lines and launcher notes hidden, a search). */
  filter: Required<OutputFilter>;
  /** The colour of a machine's prefix. */
  colourOf: (node: string) => string;
  /** Each line starts with the time the coordinator received it (blank where it kept none). */
  timestamps?: boolean;
}

interface Written {
  epoch: number;
  upTo: number;
  key: string;
  expected: number;
}

const NOTHING_WRITTEN: Written = { epoch: -1, upTo: 0, key: '', expected: 0 };

export function RunTerminal({ runId, filter, colourOf, timestamps = false }: RunTerminalProps) {
  const host = useRef<HTMLDivElement>(null);
  const term = useRef<Terminal | null>(null);
  const written = useRef<Written>(NOTHING_WRITTEN);
  const { node, hideProgress, hideLauncher, search } = filter;
  const key = JSON.stringify([node, hideProgress, hideLauncher, search, timestamps]);
  const colours = useRef(colourOf);
  colours.current = colourOf;
  const buffer = useApp((s) => s.runs.output[runId]);
  const commands = useRunCommands();
  /** Bumped when the colour scheme changes: the output is written again in that scheme's coordinator colour. */
  const [scheme, setScheme] = useState(0);

  useEffect(() => {
    const el = host.current;
    if (!el) return undefined;
    const query = darkQuery();
    const t = new Terminal({
      convertEol: true,
      disableStdin: true,
      cursorStyle: 'bar',
      cursorInactiveStyle: 'none',
      fontFamily: 'ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace',
      fontSize: 12.5,
      lineHeight: 1.2,
      scrollback: 5000,
      theme: query?.matches ? DARK : LIGHT,
      screenReaderMode: false,
    });
    const fit = new FitAddon();
    t.loadAddon(fit);
    // Keys never reach a process (disableStdin); Tab is left to the browser so focus moves on.
    t.attachCustomKeyEventHandler((e) => e.key !== 'Tab');
    t.open(el);
    t.textarea?.setAttribute('aria-label', 'Live output of the run, read-only');
    t.textarea?.setAttribute('readonly', '');
    term.current = t;
    written.current = NOTHING_WRITTEN;
    const refit = () => {
      try {
        fit.fit();
      } catch {
        // Not laid out yet (hidden tab); the next resize fits it.
      }
    };
    refit();
    const observer = new ResizeObserver(refit);
    observer.observe(el);
    const onScheme = () => {
      t.options.theme = query?.matches ? DARK : LIGHT;
      written.current = { ...written.current, epoch: -1 }; // rewrite in the other scheme's coordinator colour
      setScheme((n) => n + 1); // now, not at the next output (an ended run has none)
    };
    query?.addEventListener('change', onScheme);
    return () => {
      query?.removeEventListener('change', onScheme);
      observer.disconnect();
      t.dispose();
      term.current = null;
    };
  }, [runId]);

  useEffect(() => {
    void commands.loadRunOutput(runId);
  }, [runId, commands]);

  useEffect(() => {
    const t = term.current;
    if (!t || !buffer) return;
    const w = written.current;
    const end = buffer.dropped + buffer.text.length;
    const coordinator = darkQuery()?.matches ? COORDINATOR_DARK : COORDINATOR_LIGHT;
    const f = { node, hideProgress, hideLauncher, search };
    // Lines of the whole buffer are classified each time (a relaunch line marks the lines before it).
    const from = w.epoch === buffer.epoch && w.key === key ? Math.max(0, w.upTo - buffer.dropped) : 0;
    const stamp = timestamps ? lineStamper(buffer.times ?? [], clockTime, CLOCK_WIDTH) : undefined;
    const rendered = renderOutput(buffer.text, f, colours.current, coordinator, from, stamp);
    if (from === 0 || rendered.expectedBefore !== w.expected) {
      // A full reset (RIS) through the write queue, not t.reset(): that one acts at once, and text written just
      // before it (chunks streamed before the fetched output replaced them) would still land after it, twice.
      t.write('\x1bc');
      t.write(from === 0 ? rendered.text : renderOutput(buffer.text, f, colours.current, coordinator, 0, stamp).text);
    } else if (end > w.upTo) t.write(rendered.text);
    written.current = { epoch: buffer.epoch, upTo: end, key, expected: rendered.expected };
  }, [buffer, runId, key, node, hideProgress, hideLauncher, search, timestamps, scheme]);

  const chars = buffer ? buffer.dropped + buffer.text.length : 0;
  return (
    <div
      className="terminal"
      data-output-chars={chars}
      data-filter={node ?? ''}
      data-hide-progress={hideProgress ? 'true' : 'false'}
      data-hide-launcher={hideLauncher ? 'true' : 'false'}
      data-search={search}
      data-timestamps={timestamps ? 'true' : 'false'}
      aria-label="Live output of the run"
      role="log"
    >
      <div className="terminal-host" ref={host} />
    </div>
  );
}
