// Lint: typescript-eslint's recommended rules, and the house rules a reviewer would otherwise repeat.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/results/**', '**/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        performance: 'readonly',
        AbortSignal: 'readonly',
        AbortController: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
        fetch: 'readonly',
        Response: 'readonly',
        Request: 'readonly',
        Headers: 'readonly',
        setImmediate: 'readonly',
        crypto: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Types come from the route schemas (the TypeBox type provider) and the services' interfaces.
      '@typescript-eslint/no-explicit-any': 'off',
      // Areas add their tables and services by declaration merging: `interface DB extends AdsTables {}`.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      'no-restricted-syntax': [
        'error',
        { selector: 'TSAsExpression > TSAnyKeyword', message: "No 'as any': type the value (route schemas give handlers their types)." },
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'Read time from ctx.clock (core/clock), so the control plane can move it.',
        },
      ],
    },
  },
  {
    // The pages take their types from the route schemas (src/dashboard/wire.ts, src/apps/host/wire.ts): no any.
    files: ['web/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'error' },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
    // CommonJS imports with require() (the jest example).
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.test.ts', 'test/**', 'bench/**', 'scripts/**', 'examples/**', 'web/**'],
    rules: { 'no-restricted-syntax': 'off', '@typescript-eslint/no-unused-expressions': 'off', 'no-undef': 'off' },
  },
);
