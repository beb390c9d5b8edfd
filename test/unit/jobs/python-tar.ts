// What real tar readers make of a tarball: Python's tarfile (/usr/bin/python3, which extractall() follows) and
// GNU tar's listing. A test of a refusal first checks here that a real reader is fooled by the hostile bytes.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const PYTHON = '/usr/bin/python3';
export const hasPython = existsSync(PYTHON);
export const hasGnuTar = spawnSync('tar', ['--version'], { encoding: 'utf8' }).stdout?.includes('GNU tar') ?? false;

export interface PythonMember {
  name: string;
  type: string;
  linkname: string;
  size: number;
}

const LIST = `
import json, sys, tarfile
out = []
try:
    with tarfile.open(sys.argv[1], 'r:gz', ignore_zeros=sys.argv[2] == '1') as t:
        for m in t:
            out.append({'name': m.name, 'type': m.type.decode('latin1'), 'linkname': m.linkname, 'size': m.size})
except Exception as e:
    out.append({'error': str(e)})
print(json.dumps(out))
`;

/** The members Python's tarfile reads (with `ignoreZeros`, past the end-of-archive blocks as `tar -i` does). */
export function pythonMembers(file: string, ignoreZeros = false): PythonMember[] {
  const parsed = JSON.parse(execFileSync(PYTHON, ['-c', LIST, file, ignoreZeros ? '1' : '0'], { encoding: 'utf8' })) as (PythonMember | { error: string })[];
  const error = parsed.find((m): m is { error: string } => 'error' in m);
  if (error) throw new Error(`Python's tarfile could not read ${file}: ${error.error}`);
  return parsed as PythonMember[];
}

/** The names `tar -tzf` lists (GNU tar; `ignoreZeros` adds -i), its warnings left out. */
export function gnuTarNames(file: string, ignoreZeros = false): string[] {
  const r = spawnSync('tar', ['--list', '--gzip', ...(ignoreZeros ? ['--ignore-zeros'] : []), '--file', file], { encoding: 'utf8' });
  return r.stdout.split('\n').filter((l) => l !== '');
}

/** Writes a tarball with Python's tarfile in PAX format: one file `name` holding `body`, under a global header `globalPax`. */
export function pythonPaxTarball(out: string, globalPax: Record<string, string>, name: string, body: string): void {
  const script = `
import io, json, sys, tarfile
with tarfile.open(sys.argv[1], 'w:gz', format=tarfile.PAX_FORMAT, pax_headers=json.loads(sys.argv[2])) as t:
    data = sys.argv[4].encode()
    info = tarfile.TarInfo(sys.argv[3])
    info.size = len(data)
    t.addfile(info, io.BytesIO(data))
`;
  execFileSync(PYTHON, ['-c', script, out, JSON.stringify(globalPax), name, body]);
}
