import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The gateway serves the build at /console; `pnpm --filter @agent-platform/console dev` proxies the
// API to a running platform (CONSOLE_API, default the all-in-one mode's address).
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  // The typed client is bundled from its sources, like every in-repo import (tsconfig.base.json).
  resolve: { conditions: ['agent-platform-source', 'module', 'browser', 'development|production'] },
  build: { outDir: 'dist', emptyOutDir: true, manifest: true, target: 'es2022', sourcemap: true },
  server: { proxy: { '/api': process.env.CONSOLE_API ?? 'http://127.0.0.1:8080' } },
});
