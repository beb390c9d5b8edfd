import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The renderer is one static bundle: Electron loads it from disk, `gpu-share serve` serves it over HTTP.
export default defineConfig({
  root: 'src-renderer',
  base: './',
  plugins: [react()],
  build: { outDir: '../dist/renderer', emptyOutDir: true, sourcemap: true },
});
