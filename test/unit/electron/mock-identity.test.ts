import { describe, expect, it } from 'vitest';
import * as electron from 'electron';
import { ipcMain } from '../../mocks/electron';

describe('the electron mock', () => {
  it('is the same module instance whether imported as electron or from test/mocks', () => {
    expect((electron as unknown as { ipcMain: unknown }).ipcMain).toBe(ipcMain);
  });
});
