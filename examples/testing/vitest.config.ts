import { defineConfig } from 'vitest/config';

// Only the vitest examples: node-test/ and exec/ run under node --test.
export default defineConfig({ test: { include: ['vitest/**/*.test.ts'], hookTimeout: 60_000 } });
