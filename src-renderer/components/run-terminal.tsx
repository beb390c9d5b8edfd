/**
 * A run's live output in xterm.js. The store holds the text (fetched once, then appended from events); the
 * terminal writes only what is new since its last write, and starts over when the buffer was replaced.
 */
import { useEffect, useRef } from 'react';
import { Terminal, type ITheme } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import { useCommands } from '../app-context';
import { useApp } from '../store/app-store';

const LIGHT: ITheme = { background: '#fbfcfd', foreground: '#1f2328', cursor: '#1f2328', selectionBackground: '#b6d3ff' };
const DARK: ITheme = { background: '#0b0e12', foreground: '#d6dde6', cursor: '#d6dde6', selectionBackground: '#264f78' };

function darkQuery(): MediaQueryList | null {
  return typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
}

export function RunTerminal({ runId }: { runId: string }) {
  const host = useRef<HTMLDivElement>(null);
  const term = useRef<Terminal | null>(null);
  const written = useRef<{ epoch: number; upTo: number }>({ epoch: -1, upTo: 0 });
  const buffer = useApp((s) => s.runOutput[runId]);
  const commands = useCommands();

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
    t.open(el);
    term.current = t;
    written.current = { epoch: -1, upTo: 0 };
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
    if (w.epoch !== buffer.epoch) {
      t.reset();
      t.write(buffer.text);
      written.current = { epoch: buffer.epoch, upTo: end };
      return;
    }
    if (end <= w.upTo) return;
    const from = Math.max(0, w.upTo - buffer.dropped);
    t.write(buffer.text.slice(from));
    written.current = { epoch: buffer.epoch, upTo: end };
  }, [buffer, runId]);

  const chars = buffer ? buffer.dropped + buffer.text.length : 0;
  return (
    <div className="terminal" data-output-chars={chars} aria-label="Live output of the run" role="log">
      <div className="terminal-host" ref={host} />
    </div>
  );
}
