/** parseManifest: values and defaults, and every kind of error at its line:column with what to do. */
import { describe, expect, it } from 'vitest';
import { formatManifestIssue } from '../../../src-main/cli/commands/jobs/job-format';
import { JOB, errorLines, parseErrors, parseOk } from './manifest-helpers';

describe('a valid manifest', () => {
  it('fills every default for a job with only a name and a command', () => {
    const manifest = parseOk(`[[jobs]]\n${JOB}`);
    expect(manifest.placement).toBe('binpack');
    expect(manifest.hosts).toEqual([]);
    expect(manifest.jobs).toEqual([
      {
        name: 'a',
        command: ['train.py'],
        model: '',
        mode: '',
        hyper: {},
        seed: 0,
        requireCuda: false,
        preferCuda: false,
        minVramGib: 0,
        minRamGib: 0,
        minCores: 0,
        allowedHosts: null,
        maxAttempts: 3,
        dataMb: null,
        mflops: null,
      },
    ]);
  });

  it('reads every key, in [jobs.hyper] sub-tables, dotted keys and inline tables alike', () => {
    const manifest = parseOk(`
placement = "spread"
[[jobs]]
name = "r8"
command = ["lora_trainer.py", "--steps", "40"]
model = "tiny-gpt"
mode = "lora"
seed = 7
require_cuda = true
prefer_cuda = true   # both: require wins, accepted
min_vram_gib = 2.5
min_ram_gib = 4
min_cores = 2
allowed_hosts = ["desktop", "jetson"]
max_attempts = 5
data_mb = 10
mflops = 1e6
[jobs.hyper]
rank = 8
lr = 1e-3
target = "q_proj,v_proj"
bias = false

[[jobs]]
name = "r16"
command = ["x"]
hyper.rank = 16
hyper."odd key" = "v"

[[jobs]]
name = "r32"
command = ["x"]
hyper = { rank = 32 }

[[hosts]]
name = "jetson"
allow_jobs = ["tiny-gpt"]
deny_jobs = ["r32"]
[[hosts]]
name = "cpu-box"
`);
    expect(manifest.placement).toBe('spread');
    const [r8, r16, r32] = manifest.jobs;
    expect(r8).toMatchObject({
      model: 'tiny-gpt',
      mode: 'lora',
      seed: 7,
      requireCuda: true,
      preferCuda: true,
      minVramGib: 2.5,
      minRamGib: 4,
      minCores: 2,
      allowedHosts: ['desktop', 'jetson'],
      maxAttempts: 5,
      dataMb: 10,
      mflops: 1_000_000,
      hyper: { rank: 8, lr: 0.001, target: 'q_proj,v_proj', bias: false },
    });
    expect(r16!.hyper).toEqual({ rank: 16, 'odd key': 'v' });
    expect(r32!.hyper).toEqual({ rank: 32 });
    expect(manifest.hosts).toEqual([
      { name: 'jetson', allowJobs: ['tiny-gpt'], denyJobs: ['r32'] },
      { name: 'cpu-box', allowJobs: null, denyJobs: [] },
    ]);
  });

  it('keeps tabs and line breaks inside program arguments', () => {
    expect(parseOk('[[jobs]]\nname = "a"\ncommand = ["sh", "-c", "echo a\\tb\\nc"]\n').jobs[0]!.command[2]).toBe('echo a\tb\nc');
  });
});

describe('errors, each at its line:column', () => {
  it('an unknown key, with "did you mean" for a near miss, at the key', () => {
    expect(errorLines(`[[jobs]]\n${JOB}min_vram_gb = 4\nprefer_cuda = true\nflavour = 1\n`)).toEqual([
      '4:1 "min_vram_gb" is not a key of a [[jobs]] entry (did you mean min_vram_gib?); known keys: name, command, model, mode, hyper, seed, require_cuda, prefer_cuda, min_vram_gib, min_ram_gib, min_cores, allowed_hosts, max_attempts, data_mb, mflops',
      expect.stringMatching(/^6:1 "flavour" is not a key of a \[\[jobs\]\] entry; known keys/) as unknown as string,
    ]);
    expect(errorLines(`placment = "spread"\n[[jobs]]\n${JOB}[[hosts]]\nname = "x"\nallow_job = []\n`)).toEqual([
      '1:1 "placment" is not a key of the manifest (top level) (did you mean placement?); known keys: placement, project, jobs, hosts',
      '7:1 "allow_job" is not a key of a [[hosts]] entry (did you mean allow_jobs?); known keys: name, allow_jobs, deny_jobs',
    ]);
  });

  it('a wrong type, at the value, saying what was given and what to write', () => {
    expect(errorLines(`[[jobs]]\n${JOB}min_vram_gib = "4"\nprefer_cuda = "yes"\nseed = 1.5\nmax_attempts = 0\nmin_ram_gib = -1\n`)).toEqual([
      '4:16 jobs[0].min_vram_gib must be a number, got a string ("4"); write it without quotes',
      '5:15 jobs[0].prefer_cuda must be true or false (without quotes), got a string ("yes")',
      '6:8 jobs[0].seed must be a whole number from 0 to 4294967295, got the number 1.5; drop the fraction',
      '7:16 jobs[0].max_attempts must be a whole number from 1 to 100, got the number 0',
      '8:15 jobs[0].min_ram_gib must be a number ≥ 0, got the number -1',
    ]);
    expect(errorLines(`[[jobs]]\nname = 3\ncommand = "train.py"\nmodel = ["m"]\n`)).toEqual([
      '2:8 jobs[0].name must be a string, got the number 3; put the value in double quotes',
      '3:11 jobs[0].command must be a list of strings like ["a", "b"], got a string ("train.py")',
      '4:9 jobs[0].model must be a string, got a list; put the value in double quotes',
    ]);
  });

  it('a missing name or command, at the [[jobs]] header', () => {
    expect(errorLines('[[jobs]]\nname = "ok"\ncommand = ["x"]\n\n[[jobs]]\nmodel = "m"\n')).toEqual([
      '5:1 jobs[1].name is missing; every job needs a unique name, e.g. name = "rank8-lr3e-3"',
      '5:1 jobs[1].command is missing; give the program and its arguments, e.g. command = ["lora_trainer.py", "--steps", "40"]',
    ]);
    expect(errorLines('[[jobs]]\nname = ""\ncommand = []\n')).toEqual([
      '2:8 jobs[0].name must be 1 to 128 characters and not blank',
      '3:11 jobs[0].command is an empty list; give the program and its arguments, e.g. command = ["lora_trainer.py", "--steps", "40"]',
    ]);
  });

  it('bad list elements name their index, at the list', () => {
    expect(errorLines('[[jobs]]\nname = "a"\ncommand = ["x", 1, ""]\nallowed_hosts = ["desk top"]\n')).toEqual([
      '3:11 jobs[0].command[1] must be a string, got the number 1; put it in double quotes',
      '3:11 jobs[0].command[2] is empty; remove it or fill it in',
      '4:17 jobs[0].allowed_hosts[0] is not a node name: a node name starts with a letter or digit and uses only letters, digits, ".", "_" and "-" (at most 128); use the name from cluster.yaml or the node card',
    ]);
    expect(errorLines(`[[jobs]]\n${JOB}allowed_hosts = []\n`)).toEqual([
      '4:17 jobs[0].allowed_hosts is empty, so the job could run nowhere; remove the key to allow every node',
    ]);
  });

  it('duplicate job names and duplicate jobs, quoting the line of the first', () => {
    const text = `[[jobs]]\n${JOB}seed = 1\n[[jobs]]\n${JOB}seed = 2\n[[jobs]]\nname = "b"\ncommand = ["train.py"]\nseed = 1\n`;
    expect(errorLines(text)).toEqual([
      '6:8 job name "a" is already used by jobs[0] at line 2; job names must be unique — rename one',
      '9:1 jobs[2] ("b") defines the same job as jobs[0] at line 1: same command, model, mode, hyper and seed, so the same id; remove one, or change its seed or hyper',
    ]);
    expect(errorLines(`[[jobs]]\n${JOB}[[hosts]]\nname = "n1"\n[[hosts]]\nname = "n1"\n`)).toEqual([
      '7:8 [[hosts]] entry for "n1" repeats hosts[0] at line 5; merge them into one entry',
    ]);
  });

  it('data_mb without mflops, and min_vram_gib on a job that may not use a GPU', () => {
    expect(errorLines(`[[jobs]]\n${JOB}data_mb = 5\nmin_vram_gib = 2\n`)).toEqual([
      '4:11 jobs[0].data_mb is given without mflops; the PCIe cost rule needs both estimates — add mflops or remove data_mb',
      '5:16 jobs[0].min_vram_gib is 2 but the job neither requires nor prefers CUDA; add prefer_cuda = true (a GPU when one fits, else a CPU) or require_cuda = true, or remove min_vram_gib',
    ]);
    expect(parseOk(`[[jobs]]\n${JOB}min_vram_gib = 0\n`).jobs[0]!.minVramGib).toBe(0);
  });

  it('hyper: nested tables, dates, nan and huge integers are refused at the value', () => {
    const lines = errorLines(`[[jobs]]\n${JOB}[jobs.hyper]\nok = 1\nsub = { a = 1 }\nwhen = 2024-01-01\nbad = nan\nbig = 99999999999999999999\n`);
    expect(lines).toEqual([
      '6:7 jobs[0].hyper.sub must be a string, a finite number or true/false, got a table',
      '7:8 jobs[0].hyper.when must be a string, a finite number or true/false, got a date',
      '8:7 jobs[0].hyper.bad must be a string, a finite number or true/false, got nan',
      '9:7 jobs[0].hyper.big must be a string, a finite number or true/false, got the integer 99999999999999999999; integers must be within ±9007199254740991',
    ]);
    expect(errorLines(`[[jobs]]\n${JOB}hyper = 3\n`)).toEqual(['4:9 jobs[0].hyper must be a table like hyper = { rank = 8, lr = 0.001 }, got the number 3']);
  });

  it('placement, with a guess', () => {
    expect(errorLines(`placement = "bin-pack"\n[[jobs]]\n${JOB}`)).toEqual(['1:13 placement must be "binpack" or "spread", got a string ("bin-pack") (did you mean "binpack"?)']);
  });

  it('[jobs] instead of [[jobs]], no jobs, and a non-table job', () => {
    expect(errorLines('[jobs]\nname = "a"\ncommand = ["x"]\n')).toEqual([
      '1:1 jobs must be a list of [[jobs]] tables, got a table; write [[jobs]] (double brackets) above each entry',
    ]);
    expect(errorLines('# nothing yet\n')).toEqual(['null:null sweep.toml has no [[jobs]]; add at least one job (docs/jobs.md has a full example)']);
    expect(errorLines('jobs = []\n')).toEqual(['1:8 sweep.toml has no [[jobs]]; add at least one job (docs/jobs.md has a full example)']);
    expect(errorLines('jobs = [1]\n')).toEqual(['1:8 jobs[0] must be a table (a [[jobs]] section of key = value lines), got the number 1']);
  });

  it("a TOML syntax error gives smol-toml's line:column", () => {
    expect(errorLines(`[[jobs]]\n${JOB}seed = \n`)).toEqual([
      '4:8 sweep.toml is not valid TOML: invalid value; fix the TOML syntax here (docs/jobs.md shows the format)',
    ]);
    const [dup] = parseErrors(`[[jobs]]\n${JOB}name = "b"\n`);
    expect([dup!.line, dup!.message]).toEqual([4, 'sweep.toml is not valid TOML: trying to redefine an already defined table or value; fix the TOML syntax here (docs/jobs.md shows the format)']);
  });

  it('collects every error of every job, not just the first, in line order', () => {
    const text = Array.from({ length: 5 }, (_, i) => `[[jobs]]\nname = "j${i}"\ncommand = ["x"]\nseed = "${i}"\n`).join('');
    const lines = errorLines(text);
    expect(lines.map((l) => l.split(' ')[0])).toEqual(['4:8', '8:8', '12:8', '16:8', '20:8']);
  });

  it('errors carry their path, and print compiler style', () => {
    const [issue] = parseErrors(`[[jobs]]\n${JOB}[[jobs]]\nname = "b"\ncommand = ["y"]\nmin_cores = 1.5\n`);
    expect(issue!.path).toEqual(['jobs', 1, 'min_cores']);
    expect(formatManifestIssue(issue!, 'sweep.toml')).toBe('sweep.toml:7:13: jobs[1].min_cores must be a whole number ≥ 0, got the number 1.5; drop the fraction');
    expect(formatManifestIssue({ message: 'm', line: null, col: null, path: [] }, 'f.toml')).toBe('f.toml: m');
  });

  it('headers and keys inside multi-line strings and arrays are not taken for real ones', () => {
    const text = [
      '[[jobs]]',
      'name = "a"',
      'command = [',
      '  "sh", # [[jobs]]',
      '  "-c", """',
      '[[jobs]]',
      'seed = "no"',
      '""",',
      ']',
      "hyper.note = '''",
      "[[hosts]]'''",
      'seed = -1',
      '[[jobs]]',
      'name = "b"',
      'command = ["x"]',
      'min_cores = "2"',
    ].join('\n');
    expect(errorLines(text)).toEqual([
      '12:8 jobs[0].seed must be a whole number from 0 to 4294967295 (numpy\'s seed range), got the number -1',
      '16:13 jobs[1].min_cores must be a whole number, got a string ("2"); write it without quotes',
    ]);
  });

  it('a key written with quotes or spaces around dots is still found', () => {
    expect(errorLines(`[[jobs]]\n${JOB}"min_cores" = -2\nhyper . "__proto__" = 1\n`)).toEqual([
      '4:15 jobs[0].min_cores must be a whole number ≥ 0, got the number -2',
      '5:1 jobs[0].hyper key "__proto__" is a reserved name; rename it',
    ]);
  });
});
