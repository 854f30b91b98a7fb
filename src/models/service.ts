import type { PlatformPrincipal } from '../core/auth.js';
import { ApiError, forbidden } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import { getServiceAccount } from '../identity/service.js';

/**
 * What the models area offers other areas (runs, responses, chat completions): the registry type it
 * publishes as `ctx.services.models`, the error its providers throw, and token counting. Also the rules
 * of the model endpoints.
 */
export { ModelError, type ModelErrorCode } from './errors.js';
export type { ModelRegistry } from './providers.js';
export { countMessage, countPrompt, countTokens, truncateToTokens } from './tokens.js';
export {
  citationMarker,
  citationMarkers,
  FILE_SEARCH_FUNCTION,
  formatFileSearchOutput,
  queryOf,
  type FileSearchPassage,
} from './file-search.js';
export {
  CODE_INTERPRETER_FUNCTION,
  CodeArgumentDecoder,
  codeOf,
  formatCodeOutput,
  interpreterFunction,
  sandboxLink,
} from './code-interpreter.js';

/**
 * `DELETE /v1/models/{model}`: only a fine-tuned model of the caller's organization can be deleted, and a
 * service account needs the owner role for it. Standin trains no models, so there is none to delete: a
 * model it serves is not deletable (403), any other name is not found (404).
 */
export async function deleteModel(ctx: Ctx, principal: PlatformPrincipal, model: string): Promise<never> {
  if (principal.serviceAccountId) {
    const sa = await getServiceAccount(ctx.store.db, principal.serviceAccountId);
    if (sa.role !== 'owner')
      throw forbidden(`Deleting a model needs the 'owner' role; this service account is '${sa.role}'.`, 'insufficient_role');
  }
  if (ctx.services.models.has(model))
    throw forbidden(
      `The model '${model}' is not a fine-tuned model of your organization; only those can be deleted.`,
      'model_not_deletable',
    );
  throw new ApiError('not_found_error', `The model '${model}' does not exist`, { param: 'model', code: 'model_not_found' });
}
