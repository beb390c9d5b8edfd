/** The Start run form's project fields to RunSpec and back, and a refused start placed at the field it concerns. */
import { describe, expect, it } from 'vitest';
import { fieldsFromSpec, specFromFields } from '../../../src-renderer/features/runs/start/run-form';
import { readProjectFields, refusalField } from '../../../src-renderer/features/runs/start/run-form-project';

const base = { name: 'proj', command: ['train.py', '--epochs', '3'], samples: 64 };

describe('project fields', () => {
  it('sends the project, data, mode and modules the form shows, and refills them', () => {
    const fields = { ...fieldsFromSpec(base), project: ' /home/me/proj ', data: 'data/', dataMode: 'shard' as const, pythonCheck: 'numpy, yaml  torch.nn' };
    const result = specFromFields(fields, base);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.spec).toMatchObject({ project: '/home/me/proj', data: 'data', dataMode: 'shard', pythonCheck: ['numpy', 'yaml', 'torch.nn'] });
    const again = fieldsFromSpec(result.spec);
    expect(again).toMatchObject({ project: '/home/me/proj', data: 'data', dataMode: 'shard', pythonCheck: 'numpy, yaml, torch.nn' });
  });

  it('drops a project emptied in the form even when the spec it came from had one', () => {
    const from = { ...base, project: '/home/me/proj', data: 'data', dataMode: 'shard' as const };
    const result = specFromFields({ ...fieldsFromSpec(from), project: '', data: '' }, from);
    expect(result.ok && result.spec.project).toBe(undefined);
    expect(result.ok && result.spec.data).toBe(undefined);
    expect(result.ok && result.spec.dataMode).toBe(undefined);
  });

  it('names each bad field', () => {
    expect(readProjectFields({ project: '~/proj', data: '', dataMode: 'replicate', pythonCheck: '' }).errors.project).toMatch(/full path .*\/home\/you\/proj/);
    expect(readProjectFields({ project: '', data: 'data', dataMode: 'replicate', pythonCheck: '' }).errors.data).toMatch(/choose the project folder first/);
    expect(readProjectFields({ project: '/p', data: '../data', dataMode: 'replicate', pythonCheck: '' }).errors.data).toMatch(/inside the project/);
    expect(readProjectFields({ project: '/p', data: '', dataMode: 'replicate', pythonCheck: 'numpy, scikit-learn' }).errors.pythonCheck).toMatch(/"scikit-learn" is not a Python module/);
    expect(readProjectFields({ project: 'C:\\Users\\me\\proj', data: '', dataMode: 'replicate', pythonCheck: '' }).errors).toEqual({});
  });

  it('places a refused start at the field it is about', () => {
    expect(refusalField('no project folder /home/me/nope on the coordinator\'s machine')).toBe('project');
    expect(refusalField('the project /p is 600 MiB, over the limit of 512 MiB: biggest paths … add them to .gpushareignore')).toBe('project');
    expect(refusalField('script train2.py is not in the project snapshot')).toBe('command');
    expect(refusalField('data folder data2 is not in the project /p')).toBe('data');
    expect(refusalField('max workers must be at least min workers')).toBe(null);
  });
});
