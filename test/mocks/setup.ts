// The one place `electron` is mocked: its binary cannot exist on the build machines.
import { vi } from 'vitest';

vi.mock('electron', async () => await import('./electron'));
