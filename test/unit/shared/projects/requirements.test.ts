// requirements.txt as module checks: names, line numbers, what is skipped and said so.
import { describe, expect, it } from 'vitest';
import { importNameOf, parseRequirements, withPythonCheck } from '../../../../src-shared/projects/requirements';

describe('importNameOf', () => {
  it.each([
    ['scikit-learn', 'sklearn'],
    ['Pillow', 'PIL'],
    ['PyYAML', 'yaml'],
    ['opencv-python', 'cv2'],
    ['opencv-python-headless', 'cv2'],
    ['beautifulsoup4', 'bs4'],
    ['python-dateutil', 'dateutil'],
    ['protobuf', 'google.protobuf'],
    ['torch', 'torch'],
    ['sentencepiece', 'sentencepiece'],
    ['typing-extensions', 'typing_extensions'],
    ['Jinja2', 'jinja2'],
    ['zope.interface', 'zope_interface'],
  ])('%s imports as %s', (dist, module) => {
    expect(importNameOf(dist)).toBe(module);
  });
});

describe('parseRequirements', () => {
  it('reads names past versions, extras, markers and comments, with their line numbers', () => {
    const text = [
      '# training deps',
      '',
      'torch==1.13.1',
      'numpy >=1.21, <2  # pinned for torch',
      'sentencepiece',
      'transformers[torch]~=4.30',
      "scikit-learn; python_version >= '3.8'",
      'Pillow>=9',
      'requests @ https://example.invalid/requests.whl',
      'numpy',
    ].join('\n');
    expect(parseRequirements(text)).toEqual({
      modules: [
        { module: 'torch', source: 'requirements.txt line 3' },
        { module: 'numpy', source: 'requirements.txt line 4' },
        { module: 'sentencepiece', source: 'requirements.txt line 5' },
        { module: 'transformers', source: 'requirements.txt line 6' },
        { module: 'sklearn', source: 'requirements.txt line 7' },
        { module: 'PIL', source: 'requirements.txt line 8' },
        { module: 'requests', source: 'requirements.txt line 9' },
      ],
      notes: [],
    });
  });

  it('skips includes, editables, options, URLs and paths, each with a note naming the line', () => {
    const text = ['-r base.txt', '-e git+https://example.invalid/x.git#egg=x', '--index-url https://example.invalid/simple', 'https://example.invalid/pkg.tar.gz', './vendor/mypkg', 'tqdm', '???'].join('\r\n');
    const { modules, notes } = parseRequirements(text);
    expect(modules).toEqual([{ module: 'tqdm', source: 'requirements.txt line 6' }]);
    expect(notes).toHaveLength(6);
    expect(notes[0]).toBe("requirements.txt line 1: '-r base.txt' not followed: list the modules it needs in this file or with --python-check");
    expect(notes[1]).toMatch(/^requirements\.txt line 2: .*editable/);
    expect(notes[2]).toMatch(/^requirements\.txt line 3: .*pip option/);
    expect(notes[3]).toMatch(/^requirements\.txt line 4: .*URL or path/);
    expect(notes[4]).toMatch(/^requirements\.txt line 5: .*URL or path/);
    expect(notes[5]).toMatch(/^requirements\.txt line 7: '\?\?\?' skipped/);
  });

  it('joins backslash continuations under their first line, and survives a BOM and empty text', () => {
    expect(parseRequirements('\uFEFFtorch \\\n  ==1.13\nnumpy').modules).toEqual([
      { module: 'torch', source: 'requirements.txt line 1' },
      { module: 'numpy', source: 'requirements.txt line 3' },
    ]);
    expect(parseRequirements('')).toEqual({ modules: [], notes: [] });
  });
});

describe('withPythonCheck', () => {
  it('adds --python-check modules after the file, each once, dropping ones that are not module names', () => {
    const fromFile = parseRequirements('torch\n').modules;
    expect(withPythonCheck(fromFile, ['torch', 'mylib', 'bad.', 'google.protobuf'])).toEqual([
      { module: 'torch', source: 'requirements.txt line 1' },
      { module: 'mylib', source: '--python-check' },
      { module: 'google.protobuf', source: '--python-check' },
    ]);
    expect(withPythonCheck([], undefined)).toEqual([]);
  });
});
