import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import layers from './eslint/layers.js';

/**
 * The layers of src/, lowest first (docs/architecture.md). A folder (or a file directly in src/)
 * imports values only from the layers below its own, never from its own layer's other units.
 */
const SRC_LAYERS = [
  ['errors', 'text', 'native-types', 'native-plugin-host', 'load-module'],
  ['native', 'log', 'config'],
  ['counters'],
  ['events'],
  ['hooks'],
  ['api'],
  ['maintenance', 'objects', 'auth'],
  ['session', 'console'],
  ['cluster'],
  ['plugins'],
  ['thread-setup', 'features', 'objects-command'],
  ['server'],
  ['index', 'cli', 'sdk'],
];

export default tseslint.config(
  { ignores: ['build/**', 'node_modules/**', 'test-output/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly',
        setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly',
        setImmediate: 'readonly', queueMicrotask: 'readonly', performance: 'readonly', AbortController: 'readonly',
        TextEncoder: 'readonly', TextDecoder: 'readonly', fetch: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/**/*.ts', 'src/**/*.js', 'src/**/*.mjs'],
    plugins: { 'gsf-layers': layers },
    rules: { 'gsf-layers/one-way': ['error', { src: 'src', layers: SRC_LAYERS }] },
  },
  {
    // Layers point one way: the event system knows nothing of the features built on it
    // (sessions, objects, the API service, authentication, plugins' APIs); they plug into it
    // through the hooks typed in src/events/types.ts.
    files: ['src/events/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          group: ['**/session/**', '**/objects/**', '**/api/**', '**/auth/**', '**/plugins/**', '**/cluster/**', '**/console/**'],
          message: 'src/events/ must not import the features built on it; give the runtime a hook they register instead.',
        }],
      }],
    },
  },
);
