import neostandard from 'neostandard'
import importPlugin from 'eslint-plugin-import'

/**
 * The dependency rule (docs/architecture.md): imports go one way.
 *   app/ (the composition root: app.ts, server.ts) stands above everything it wires; nothing imports it;
 *   src/ (the framework-free core) imports nothing from plugins/, routes/, schemas/ or Fastify;
 *   schemas/ imports only src/domain and TypeBox;
 *   plugins/ never imports routes/;
 *   the service tests (test/services/) never import routes/: services are tested without their routes.
 */
const framework = ['fastify', 'fastify-*', '@fastify/*']

export const dependencyRule = {
  files: ['src/**/*.ts', 'schemas/**/*.ts', 'plugins/**/*.ts', 'routes/**/*.ts', 'test/services/**/*.ts'],
  plugins: { import: importPlugin },
  settings: { 'import/resolver': { node: { extensions: ['.ts', '.js', '.mjs'] } } },
  rules: {
    'import/no-restricted-paths': ['error', {
      basePath: import.meta.dirname,
      zones: [
        { target: './src', from: ['./plugins', './routes', './schemas', './app'], message: 'src/ is the framework-free core: it imports nothing from plugins/, routes/, schemas/ or app/ (app/ composes them).' },
        { target: ['./plugins', './routes', './schemas'], from: './app', message: 'app/ is the composition root: it imports the layers, none of them imports it.' },
        { target: './schemas', from: './src', except: ['./domain'], message: 'schemas/ imports only src/domain and TypeBox.' },
        { target: './schemas', from: ['./plugins', './routes'], message: 'schemas/ imports only src/domain and TypeBox.' },
        { target: './plugins', from: './routes', message: 'plugins/ never imports routes/: routes depend on plugins, not the other way.' },
        { target: './test/services', from: './routes', message: 'Service tests import nothing from routes/: a service neither needs nor calls route code.' }
      ]
    }]
  }
}

const coreFiles = { files: ['src/**/*.ts'] }

export default [
  { ignores: ['dist/**', 'sdk/dist/**', 'sdk/src/generated/**', 'bench/results/**', 'coverage/**', '.tap/**', 'node_modules/**', 'data/**', 'test/fixtures/lint/**'] },
  ...neostandard({ ts: true }),
  dependencyRule,
  {
    ...coreFiles,
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: framework, message: 'src/ is the framework-free core: no Fastify in src/ (app/, plugins/ and routes/ speak HTTP).' }]
      }]
    }
  },
  {
    files: ['schemas/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ regex: '^(?!\\.|@sinclair/typebox)', message: 'schemas/ imports only src/domain and TypeBox.' }]
      }]
    }
  }
]
