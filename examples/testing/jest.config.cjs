// Only the jest example: vitest/ runs under vitest, node-test/ and exec/ under node --test.
module.exports = { testMatch: ['<rootDir>/jest/**/*.test.cjs'], testEnvironment: 'node', testTimeout: 60_000 };
