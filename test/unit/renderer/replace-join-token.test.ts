// The Workers view's "Add a worker" card offers Replace join token, which asks before replacing.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ServicesContext, type AppServices } from '../../../src-renderer/app-context';
import { ReplaceJoinTokenButton } from '../../../src-renderer/features/workers/replace-join-token';
import type { GpuShareApi } from '../../../src-shared/ipc';

describe('Replace join token', () => {
  it('is a button that opens a confirmation first (nothing is replaced before it)', () => {
    let rotated = 0;
    const api = { rotateJoinToken: async () => (rotated += 1) } as unknown as GpuShareApi;
    const services = { api, commands: {} as AppServices['commands'], inElectron: false };
    const html = renderToStaticMarkup(createElement(ServicesContext.Provider, { value: services }, createElement(ReplaceJoinTokenButton)));
    expect(html).toContain('data-testid="replace-join-token"');
    expect(html).toContain('Replace join token');
    expect(html).not.toContain('replace-join-token-dialog');
    expect(rotated).toBe(0);
  });
});
