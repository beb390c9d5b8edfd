/**
 * Another machine's output and node name must reach the terminal as text: nothing that erases, moves the
 * cursor, retitles, links or hides, including when a sequence is cut between two chunks.
 */
/* eslint-disable no-control-regex -- these tests look for terminal control characters on purpose */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_NODE_NAME_CHARS, sanitizeNodeName, sanitizeRemoteOutput, type RemoteOutputState } from '../../../src-shared/terminal-text';

/** What may come out: printable text, \t, \n, \r\n, and SGR colour sequences. Nothing else. */
const SAFE_OUTPUT = /^(?:[^\x00-\x1f\x7f-\x9f]|\t|\n|\r\n|\x1b\[[0-9;:]*m)*$/;
const SGR = /\x1b\[[0-9;:]*m/g;

function chunked(chunks: string[]): string[] {
  const state: RemoteOutputState = {};
  return chunks.map((c) => sanitizeRemoteOutput(c, state));
}

/** Text a person sees, colours aside. */
function visible(s: string): string {
  return s.replace(SGR, '');
}

/** Whether colours are still on at the end of `s` (a non-reset SGR after the last reset). */
function coloursOpenAtEnd(s: string): boolean {
  const seqs = s.match(SGR) ?? [];
  const last = seqs[seqs.length - 1];
  return last !== undefined && !/^\x1b\[[0;]*m$/.test(last);
}

describe('the screen-forging attack', () => {
  const attack = '\x1b[2J\x1b[H\x1b[3J\x1bc\x1b]0;GPU Share\x07training FINISHED OK\r\n';

  it('comes out as the forged line in plain sight, with no erase, home, reset or title left', () => {
    expect(sanitizeRemoteOutput(attack)).toBe('training FINISHED OK\r\n');
  });

  it('is defused wherever it is cut between two chunks', () => {
    for (let cut = 0; cut <= attack.length; cut++) {
      const out = chunked([attack.slice(0, cut), attack.slice(cut)]);
      expect(out.join(''), `cut at ${cut}`).toBe('training FINISHED OK\r\n');
      for (const piece of out) expect(piece).toMatch(SAFE_OUTPUT);
    }
  });

  it('is defused when it arrives one character at a time', () => {
    expect(chunked([...attack]).join('')).toBe('training FINISHED OK\r\n');
  });

  it('cannot hide the line after it by leaving colours on (concealed, black on black)', () => {
    const state: RemoteOutputState = {};
    const out = sanitizeRemoteOutput('step 9 loss 4.1\x1b[8m\x1b[30;40m', state);
    expect(coloursOpenAtEnd(out)).toBe(false);
    // The worker's own next text gets its colours back; another node's line in between does not.
    expect(sanitizeRemoteOutput('secret\n', state)).toBe('\x1b[8m\x1b[30;40msecret\x1b[0m\n');
  });
});

describe('what is kept', () => {
  it('keeps text, tabs, \\n, \\r\\n and colour', () => {
    const text = 'step 1\tloss 2.5\n\x1b[32mok\x1b[0m done\r\nünïcödé 训练 🚀\n';
    expect(sanitizeRemoteOutput(text)).toBe(text);
  });

  it('keeps 256-colour and truecolour SGR, including the colon form', () => {
    expect(sanitizeRemoteOutput('\x1b[38;5;208mA\x1b[38:2::255:0:0mB\x1b[m')).toBe('\x1b[38;5;208mA\x1b[38:2::255:0:0mB\x1b[0m');
  });

  it('passes plain text through untouched, however it is cut', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme' }).map((s) => s.replace(/[\x00-\x1f\x7f-\x9f]/g, '')), { maxLength: 8 }), (chunks) => {
        expect(chunked(chunks).join('')).toBe(chunks.join(''));
      }),
    );
  });
});

describe('what is dropped', () => {
  const cases: [string, string, string][] = [
    ['erase line', 'a\x1b[2Kb', 'ab'],
    ['cursor up and column', 'a\x1b[5A\x1b[10Gb', 'ab'],
    ['scroll region', 'a\x1b[1;5rb', 'ab'],
    ['private mode (alternate screen, hidden cursor)', 'a\x1b[?1049h\x1b[?25lb', 'ab'],
    ['private SGR-looking sequence', 'a\x1b[>4;2mb', 'ab'],
    ['OSC 8 hyperlink', '\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\', 'click'],
    ['OSC title ended by BEL', '\x1b]2;pwned\x07x', 'x'],
    ['OSC 52 clipboard', '\x1b]52;c;cm0gLXJmIH4=\x07x', 'x'],
    ['DCS', 'a\x1bPq#0;2;0;0;0\x1b\\b', 'ab'],
    ['APC, PM, SOS', 'a\x1b_x\x1b\\b\x1b^y\x1b\\c\x1bXz\x1b\\d', 'abcd'],
    ['single ESC sequences: reset, save/restore cursor, index, DECALN, charset', 'a\x1bc\x1b7\x1b8\x1bD\x1bM\x1b#8\x1b(0b', 'ab'],
    ['C1 CSI keeps its harmless tail as text', 'a\u009b2Jb', 'a2Jb'],
    ['C1 controls', 'a\u0085\u008d\u0090\u009d\u009cb', 'ab'],
    ['BEL, backspace, form feed, vertical tab, SO/SI, NUL, DEL', 'a\x07\b\f\v\x0e\x0f\x00\x7fb', 'ab'],
    ['CAN cancels a sequence', 'a\x1b[2\x18Jb', 'aJb'],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      expect(sanitizeRemoteOutput(input)).toBe(expected);
    });
  }

  it('turns a lone CR into a line end, so a line (and its [node] prefix) cannot be overwritten', () => {
    expect(sanitizeRemoteOutput('[jetson] loss 3.2\r[desktop] training FINISHED OK\n')).toBe('[jetson] loss 3.2\n[desktop] training FINISHED OK\n');
  });

  it('keeps CRLF cut between chunks as one CRLF, and "\\r\\r\\n" as one line end', () => {
    expect(chunked(['a\r', '\nb']).join('')).toBe('a\r\nb');
    expect(chunked(['a\r', '\r', '\nb']).join('')).toBe('a\r\nb');
    expect(chunked(['10%\r', '20%\r', '']).join('')).toBe('10%\n20%');
  });

  it('stops hiding text at the end of the line when a title is never terminated', () => {
    expect(sanitizeRemoteOutput('\x1b]0;title\nreal text\n')).toBe('\nreal text\n');
  });

  it('abandons a runaway payload, so it cannot swallow the rest of the output', () => {
    const out = sanitizeRemoteOutput(`\x1b]0;${'x'.repeat(10_000)}`);
    expect(out.length).toBeGreaterThan(5000);
    expect(out).toMatch(SAFE_OUTPUT);
  });

  it('drops a CSI too long to be colour', () => {
    expect(sanitizeRemoteOutput(`a\x1b[${'1;'.repeat(100)}mb`)).toBe('ab');
  });
});

/** Pieces that, joined at random, make hostile streams: every kind of sequence, fragments of them, and text. */
const piece = fc.oneof(
  fc.constantFrom(
    '\x1b', '[', ']', '\\', 'P', '_', '^', 'X', '#', '(', '?', ';', ':', 'm', 'J', 'H', 'K', 'c', '7',
    '\x1b[', '\x1b]', '\x1bP', '\x1b\\', '\x07', '\r', '\n', '\r\n', '\t', '\b', '\f', '\v', '\x18', '\x7f',
    '\u009b', '\u009c', '\u009d', '\u0085', '\x1b[2J', '\x1b[31m', '\x1b[0m', '\x1b[8m', '\x1b]8;;http://x/\x07',
    'FINISHED OK', ' ', '0', '12',
  ),
  fc.string({ maxLength: 6 }),
  fc.integer({ min: 0, max: 0x10ffff }).map((cp) => (cp >= 0xd800 && cp <= 0xdfff ? 'x' : String.fromCodePoint(cp))),
);
const stream = fc.array(piece, { maxLength: 60 }).map((parts) => parts.join(''));
/** A stream and where to cut it into chunks. */
const cutStream = stream.chain((s) =>
  fc.uniqueArray(fc.integer({ min: 0, max: s.length }), { maxLength: 8 }).map((cuts) => {
    const points = [0, ...cuts.sort((a, b) => a - b), s.length];
    return { whole: s, chunks: points.slice(1).map((end, k) => s.slice(points[k], end)) };
  }),
);

describe('properties over hostile streams', () => {
  it('every chunk that comes out holds only text, \\t, \\n, \\r\\n and colour', () => {
    fc.assert(
      fc.property(cutStream, ({ chunks }) => {
        for (const out of chunked(chunks)) expect(out).toMatch(SAFE_OUTPUT);
      }),
      { numRuns: 500 },
    );
  });

  it('shows the same text however the stream is cut', () => {
    fc.assert(
      fc.property(cutStream, ({ whole, chunks }) => {
        const all = chunked([whole, '']).join('');
        expect(visible(chunked(chunks).join(''))).toBe(visible(all));
      }),
      { numRuns: 500 },
    );
  });

  it('leaves colours off at the end of every chunk and every line', () => {
    fc.assert(
      fc.property(cutStream, ({ chunks }) => {
        for (const out of chunked(chunks)) {
          expect(coloursOpenAtEnd(out)).toBe(false);
          for (const line of out.split('\n').slice(0, -1)) expect(coloursOpenAtEnd(line)).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('never loses printable text that is outside every sequence', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(piece, fc.constantFrom('alpha', 'beta', 'gamma')), { maxLength: 20 }), (pairs) => {
        // Each word follows a line end, which ends any sequence a stray piece left open.
        const input = pairs.map(([junk, word]) => `${junk}\n${word}`).join('');
        const out = visible(sanitizeRemoteOutput(input));
        for (const [, word] of pairs) expect(out).toContain(word);
      }),
    );
  });

  it('keeps up with a megabyte of hostile output', () => {
    const input = '\x1b[2J\x1b[31mloss 0.5\x1b[0m\r\n\x1b]0;t\x07\u009b\b'.repeat(30_000);
    const started = performance.now();
    const out = sanitizeRemoteOutput(input, {});
    expect(performance.now() - started).toBeLessThan(1000);
    expect(visible(out)).toBe('loss 0.5\r\n'.repeat(30_000));
  });
});

describe('sanitizeNodeName', () => {
  it('keeps an ordinary name as it is', () => {
    expect(sanitizeNodeName('rtx-4090.lab_1')).toBe('rtx-4090.lab_1');
  });

  it('removes escapes, colours, controls and bidi overrides, and folds whitespace', () => {
    expect(sanitizeNodeName('\x1b[2J\x1b[31mjet\x07son\x1b[0m\r\n\u202eevil\t x')).toBe('jetson evil x');
  });

  it(`caps a name at ${MAX_NODE_NAME_CHARS} characters without splitting an emoji`, () => {
    const name = sanitizeNodeName('🚀'.repeat(200));
    expect(Array.from(name)).toHaveLength(MAX_NODE_NAME_CHARS);
    expect(name).toBe('🚀'.repeat(MAX_NODE_NAME_CHARS));
  });

  it('never returns an empty name', () => {
    expect(sanitizeNodeName('\x1b[2J\x07 \n')).toBe('?');
  });

  it('returns only printable characters for any input', () => {
    fc.assert(
      fc.property(stream, (s) => {
        const name = sanitizeNodeName(s);
        expect(name).toMatch(/^[^\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]+$/);
        expect(Array.from(name).length).toBeLessThanOrEqual(MAX_NODE_NAME_CHARS);
      }),
    );
  });
});
