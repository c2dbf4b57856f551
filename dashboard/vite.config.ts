import { defineConfig } from 'vite'

// Built by `npm run build` into dist/dashboard, served by plugins/dashboard.ts under /dashboard/.
export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  // Preact's automatic JSX runtime through esbuild: no Babel preset needed.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: '../dist/dashboard',
    emptyOutDir: true,
    // Everything under assets/ has a content hash: the plugin caches it for a year.
    assetsDir: 'assets',
    // No inline script: the polyfill is only for browsers without modulepreload, which the CSP setup does not target.
    modulePreload: { polyfill: false },
    // Fonts/images are never inlined as data: URIs beyond the CSP's img-src; keep every asset a file.
    assetsInlineLimit: 0,
    sourcemap: false
  }
})
