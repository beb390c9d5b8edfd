// Every command line goes through util.parseArgs: these pin the messages a person gets for a bad one, and the
// dispatch of commands made of subcommands (help, unknown ones, `--` handing words to the training command).
import { describe, expect, it } from 'vitest';
import { intOption, noMorePositionals, parseCommandLine, UsageError } from '../../../src-main/cli/command';
import { cli } from './helpers';

const options = { port: { type: 'string' }, json: { type: 'boolean' }, 'data-dir': { type: 'string' }, env: { type: 'string', multiple: true } } as const;

describe('parseCommandLine', () => {
  it('reads --flag value, --flag=value, booleans, repeated flags and words after --', () => {
    const r = parseCommandLine(['--port', '80', '--data-dir=/d', '--json', '--env', 'A=1', '--env', 'B=2', 'word', '--', '--json'], options);
    expect(r.values).toEqual({ port: '80', 'data-dir': '/d', json: true, env: ['A=1', 'B=2'] });
    expect(r.positionals).toEqual(['word', '--json']);
  });

  it('names an unknown flag, and the known one a typo is closest to', () => {
    expect(() => parseCommandLine(['--jsno'], options)).toThrow(new UsageError('unknown option --jsno (did you mean --json?)'));
    expect(() => parseCommandLine(['--data-dri', 'x'], options)).toThrow(new UsageError('unknown option --data-dri (did you mean --data-dir?)'));
    expect(() => parseCommandLine(['--frobnicate'], options)).toThrow(new UsageError('unknown option --frobnicate'));
    expect(() => parseCommandLine(['-x'], options)).toThrow(new UsageError('unknown option -x'));
  });

  it('says which flag lacks its value, or has one it does not take', () => {
    expect(() => parseCommandLine(['--port'], options)).toThrow(new UsageError('--port needs a value'));
    expect(() => parseCommandLine(['--port='], options)).toThrow(new UsageError('--port needs a value'));
    expect(() => parseCommandLine(['--json=yes'], options)).toThrow(new UsageError('--json takes no value'));
    expect(() => parseCommandLine(['--port', '--json'], options)).toThrow(new UsageError('--port needs a value (one that starts with "-" is written --port=-VALUE)'));
  });

  it('checks whole numbers and extra words with messages that name them', () => {
    expect(intOption(undefined, 'port', 7, 0, 10)).toBe(7);
    expect(intOption('10', 'port', 7, 0, 10)).toBe(10);
    expect(() => intOption('11', 'port', 7, 0, 10)).toThrow(new UsageError('--port must be between 0 and 10, got 11'));
    expect(() => intOption('1.5', 'port', 7, 0, 10)).toThrow(new UsageError('--port must be a whole number, got "1.5"'));
    expect(() => noMorePositionals(['a', 'b'], 1)).toThrow(new UsageError('unexpected argument "b"'));
    expect(() => noMorePositionals(['a'], 1)).not.toThrow();
  });
});

describe('gpu-share dispatch', () => {
  it('lists the operator commands in the overview', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ {2}runs +start, list, show, stop, delete, tag and follow training runs/m);
    expect(r.out).toMatch(/^ {2}workers +list the workers and machines awaiting approval, approve, revoke, drain/m);
    expect(r.out).toMatch(/^ {2}token +replace the join token/m);
  });

  it('shows a group its subcommands: on --help (exit 0) and when none is given (exit 2, stderr)', async () => {
    const help = await cli(['runs', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^ {2}start +start a run/m);
    expect(help.out).toMatch(/^ {2}logs +a run's output/m);
    const none = await cli(['workers']);
    expect(none.code).toBe(2);
    expect(none.out).toBe('');
    expect(none.err).toMatch(/^ {2}drain +take a worker out of training/m);
  });

  it('refuses an unknown subcommand, naming it', async () => {
    const r = await cli(['runs', 'restart']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^gpu-share runs: unknown command "restart"\n/);
  });

  it('answers a subcommand --help with its own usage', async () => {
    const r = await cli(['runs', 'start', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: gpu-share runs start \[options\] -- SCRIPT/);
    expect(r.out).toContain('--min-workers N');
    expect(r.out).toContain('Exit status: 0 done');
  });

  it('leaves --help after -- to the training command', async () => {
    // Parsed as a run with "train.py --help" as its command; it then fails on the missing --samples, not with help.
    const r = await cli(['runs', 'start', '--', 'train.py', '--help']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^gpu-share runs start: --samples N is required/);
  });

  it('prints a usage error with the synopsis and where to find every option, not the whole help', async () => {
    const r = await cli(['runs', 'list', '--jsn']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('gpu-share runs list: unknown option --jsn (did you mean --json?)\n\nUsage: gpu-share runs list [--json]\nRun `gpu-share runs list --help` for every option.\n');
  });

  it('gives serve the same flags as before, through util.parseArgs', async () => {
    const r = await cli(['serve', '--tokn', 'x']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^gpu-share serve: unknown option --tokn\n\nUsage: gpu-share serve \[options\]\n/);
  });
});
