import { invalid } from '../../core/errors.js';
import type { Ctx } from '../../core/module.js';
import type { ResponseFormat, Tool } from '../objects.js';

/** Rules shared by assistants, threads and runs. */

export function checkModel(ctx: Pick<Ctx, 'services'>, model: string, param = 'model'): void {
  if (!ctx.services.models.has(model)) throw invalid(`The requested model '${model}' does not exist.`, param, 'model_not_found');
}

/** file_search with json_schema: the platform accepts only function tools next to structured outputs. */
export function checkToolsVsFormat(tools: readonly Tool[], format: ResponseFormat | null | undefined): void {
  if (format && typeof format === 'object' && format.type === 'json_schema' && tools.some((t) => t.type !== 'function')) {
    throw invalid(
      'Invalid tools: all tools must be of type `function` when `response_format` is of type `json_schema`.',
      'response_format',
      'invalid_value',
    );
  }
}

/**
 * Tools as the platform shows them: file_search with its effective settings — max_num_results (default
 * 20, or 5 for gpt-3.5-turbo models) and ranking options (ranker `auto`, threshold 0 when not given).
 */
export function normalizeTools(tools: readonly Tool[] | null | undefined, model: string): Tool[] {
  return (tools ?? []).map((t) => {
    if (t.type !== 'file_search') return t;
    const fs = t.file_search ?? {};
    return {
      type: 'file_search',
      file_search: {
        max_num_results: fs.max_num_results ?? (model.startsWith('gpt-3.5') ? 5 : 20),
        ranking_options: { ranker: fs.ranking_options?.ranker ?? 'auto', score_threshold: fs.ranking_options?.score_threshold ?? 0 },
      },
    };
  });
}
