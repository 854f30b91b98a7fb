/**
 * What the models area offers other areas (runs, responses, chat completions): the registry type it
 * publishes as `ctx.services.models`, the error its providers throw, and token counting.
 */
export { ModelError, type ModelErrorCode } from './errors.js';
export type { ModelRegistry } from './providers.js';
export { countMessage, countPrompt, countTokens, truncateToTokens } from './tokens.js';
