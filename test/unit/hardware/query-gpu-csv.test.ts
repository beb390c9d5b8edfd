import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseQueryGpuCsv, QUERY_GPU_FIELDS, queryGpuArgs, QueryGpuParseError } from '../../../src-main/platform/hardware/query-gpu-csv';
import { CAPTURE_FIELDS, fixture } from './fake-env';

const read = (name: string) => readFileSync(fixture(name), 'utf8');
const fields = (list: string) => list.split(',');

describe('parseQueryGpuCsv on the real captures', () => {
  it('reads the three consumer cards from a capture with header and units (header and units tolerated)', () => {
    const rows = parseQueryGpuCsv(read('query-gpu-csv-header-units-consumer-x3.txt'));
    expect(rows.map((r) => [r.uuid, r.memoryTotalMib, r.memoryUsedMib, r.utilizationGpuPct, r.temperatureC])).toEqual([
      ['GPU-20fe89bc-c8ef-5a9f-078e-efa3324d790b', 8119, 754, 100, 73],
      ['GPU-68988cf6-8de9-6585-a263-d2e3ea96b75a', 4043, 586, 100, 67],
      ['GPU-90e3dab0-b59d-8bf6-d909-d4fab8d2f29b', 8119, 641, 100, 68],
    ]);
    // Fields the capture did not ask for are null, not invented.
    expect(rows.every((r) => r.name === null && r.index === null && r.memoryFreeMib === null && r.driverVersion === null)).toBe(true);
    expect(rows.map((r) => r.line)).toEqual([2, 3, 4]);
  });

  it('picks our nine fields out of the 212-column H100 MIG capture, [N/A] utilisation as null', () => {
    const [row, ...rest] = parseQueryGpuCsv(read('query-gpu-csv-header-units-allfields-h100-mig.txt'));
    expect(rest).toEqual([]);
    expect(row).toEqual({
      line: 2,
      index: 0,
      uuid: 'GPU-00000000-0000-0000-0000-000000000000',
      name: 'NVIDIA H100 80GB HBM3',
      memoryTotalMib: 81559,
      memoryUsedMib: 11125,
      memoryFreeMib: 69956,
      utilizationGpuPct: null,
      temperatureC: 53,
      driverVersion: '590.48.01',
    });
  });

  it('reads the Tesla P100 capture (header, no units, no trailing newline)', () => {
    const rows = parseQueryGpuCsv(read('query-gpu-csv-nounits-tesla-p100.txt'));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      name: 'Tesla P100-PCIE-16GB',
      uuid: 'GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6',
      memoryUsedMib: 0,
      memoryFreeMib: 16280,
      utilizationGpuPct: 0,
      temperatureC: 37,
      memoryTotalMib: null,
    });
  });

  it('reads GB10 with [N/A] memory, with a header', () => {
    expect(parseQueryGpuCsv(read('query-gpu-csv-gb10-na.txt'))).toEqual([
      expect.objectContaining({ index: 0, name: 'NVIDIA GB10', memoryTotalMib: null, memoryFreeMib: null }),
    ]);
  });

  it('reads GB10 without a header when told the fields it was captured with', () => {
    expect(parseQueryGpuCsv(read('query-gpu-csv-noheader-nounits-gb10-na.txt'), fields(CAPTURE_FIELDS.gb10))).toEqual([
      expect.objectContaining({ line: 1, name: 'NVIDIA GB10', memoryTotalMib: null }),
    ]);
  });

  it('reads the Jetson Orin line: every memory field [N/A]', () => {
    const rows = parseQueryGpuCsv(read('query-gpu-csv-noheader-nounits-jetson-orin-na.txt'), fields(CAPTURE_FIELDS.jetson));
    expect(rows).toEqual([
      {
        line: 1,
        index: 0,
        uuid: null,
        name: 'Orin (nvgpu)',
        memoryTotalMib: null,
        memoryUsedMib: null,
        memoryFreeMib: null,
        utilizationGpuPct: null,
        temperatureC: null,
        driverVersion: null,
      },
    ]);
  });

  it('reads the RTX 2080 line of driver 440 (gpu_uuid alias, bare N/A in a column we skip)', () => {
    const rows = parseQueryGpuCsv(read('query-gpu-csv-noheader-nounits-rtx2080-drv440.txt'), fields(CAPTURE_FIELDS.rtx2080));
    expect(rows[0]).toMatchObject({
      name: 'GeForce RTX 2080',
      uuid: 'GPU-22b2c6ac-2d49-4863-197c-9c469071178a',
      memoryTotalMib: 7979,
      driverVersion: '440.64',
      temperatureC: 45,
      utilizationGpuPct: 86,
    });
  });

  it('refuses a header-less capture read with the wrong field list, naming line and counts', () => {
    expect(() => parseQueryGpuCsv(read('query-gpu-csv-noheader-nounits-jetson-orin-na.txt'))).toThrow(
      /line 1: expected 9 values \(index, uuid, name, .*\), got 7: "0, Orin \(nvgpu\), \[N\/A\]/,
    );
    expect(() => parseQueryGpuCsv(read('query-gpu-csv-noheader-nounits-rtx2080-drv440.txt'))).toThrow(QueryGpuParseError);
  });

  it('refuses error texts printed where CSV was expected', () => {
    for (const name of ['error-no-devices.txt', 'error-nvml-driver-library-mismatch.txt', 'error-driver-communicate.txt', 'error-nvml-unknown-error.txt']) {
      expect(() => parseQueryGpuCsv(read(name)), name).toThrow(/line 1: expected 9 values/);
    }
  });
});

describe('parseQueryGpuCsv rules', () => {
  const good = '0, GPU-9c8f2a31-52d6-4e0b-8f7e-0123456789ab, NVIDIA GeForce RTX 4090, 24564, 1203, 22990, 7, 41, 550.54.14';

  it('uses the same field list for the command line and the parse', () => {
    expect(queryGpuArgs()).toEqual([`--query-gpu=${QUERY_GPU_FIELDS.join(',')}`, '--format=csv,noheader,nounits']);
    expect(parseQueryGpuCsv(`${good}\n`)).toEqual([
      {
        line: 1,
        index: 0,
        uuid: 'GPU-9c8f2a31-52d6-4e0b-8f7e-0123456789ab',
        name: 'NVIDIA GeForce RTX 4090',
        memoryTotalMib: 24564,
        memoryUsedMib: 1203,
        memoryFreeMib: 22990,
        utilizationGpuPct: 7,
        temperatureC: 41,
        driverVersion: '550.54.14',
      },
    ]);
  });

  it('skips blank lines and CRLF endings (nvidia-smi.exe on Windows)', () => {
    const rows = parseQueryGpuCsv(`${good}\r\n\r\n${good.replace('0, GPU-9c8f', '1, GPU-1c8f')}\r\n`);
    expect(rows.map((r) => [r.index, r.line])).toEqual([
      [0, 1],
      [1, 3],
    ]);
    expect(parseQueryGpuCsv('')).toEqual([]);
  });

  it('every bracketed placeholder and bare N/A is null', () => {
    for (const placeholder of ['[N/A]', '[Not Supported]', '[Insufficient Permissions]', '[Unknown Error]', '[GPU requires reset]', 'N/A']) {
      const [row] = parseQueryGpuCsv(good.replace(', 24564,', `, ${placeholder},`));
      expect(row!.memoryTotalMib, placeholder).toBeNull();
      expect(row!.memoryUsedMib).toBe(1203);
    }
  });

  it('tolerates the unit nvidia-smi prints without nounits, and only that unit', () => {
    const withUnits = '0, GPU-9c8f2a31-52d6-4e0b-8f7e-0123456789ab, NVIDIA GeForce RTX 4090, 24564 MiB, 1203 MiB, 22990 MiB, 7 %, 41, 550.54.14';
    expect(parseQueryGpuCsv(withUnits)[0]).toMatchObject({ memoryTotalMib: 24564, utilizationGpuPct: 7 });
    expect(() => parseQueryGpuCsv(withUnits.replace('24564 MiB', '24 GB'))).toThrow(/memory\.total must be a whole number \(optionally followed by " MiB"\), got "24 GB"/);
  });

  it('folds commas inside a name back into the name (nvidia-smi does not quote)', () => {
    const [row] = parseQueryGpuCsv(good.replace('NVIDIA GeForce RTX 4090', 'NVIDIA RTX, Special, Edition'));
    expect(row).toMatchObject({ name: 'NVIDIA RTX, Special, Edition', memoryTotalMib: 24564, driverVersion: '550.54.14' });
  });

  it('throws with the line number and the text for garbage', () => {
    const text = `${good}\nthis is not csv at all\n`;
    try {
      parseQueryGpuCsv(text);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(QueryGpuParseError);
      const e = error as QueryGpuParseError;
      expect(e.lineNumber).toBe(2);
      expect(e.message).toContain('line 2');
      expect(e.message).toContain('"this is not csv at all"');
    }
  });

  it('checks each value against its column', () => {
    expect(() => parseQueryGpuCsv(good.replace(', 24564,', ', lots,'))).toThrow(/line 1: memory\.total must be a whole number.*got "lots"/);
    expect(() => parseQueryGpuCsv(good.replace(', 7, 41,', ', 150, 41,'))).toThrow(/utilization\.gpu must be at most 100/);
    expect(() => parseQueryGpuCsv(good.replace('GPU-9c8f2a31-52d6-4e0b-8f7e-0123456789ab', 'not-a-uuid'))).toThrow(/uuid must look like GPU-/);
    expect(() => parseQueryGpuCsv(good.replace(', 1203,', ', -5,'))).toThrow(/memory\.used must be at least 0/);
    expect(() => parseQueryGpuCsv(good.replace('0, GPU', '1.5, GPU'))).toThrow(/index must be a whole number/);
    expect(() => parseQueryGpuCsv(good.replace(', NVIDIA GeForce RTX 4090,', ', ,'))).toThrow(/name must not be empty/);
  });

  it('accepts MIG UUIDs', () => {
    const [row] = parseQueryGpuCsv(good.replace('GPU-9c8f2a31-52d6-4e0b-8f7e-0123456789ab', 'MIG-00000002-0000-0000-0000-000000000002'));
    expect(row!.uuid).toBe('MIG-00000002-0000-0000-0000-000000000002');
  });
});
