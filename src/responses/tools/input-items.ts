import { invalid } from '../../core/errors.js';
import { HOSTED_ITEM_TYPES, type HostedItem, type HostedItemType } from '../input-schemas.js';
import type { HostedInputItem } from './hosted.js';
import { HOSTED_TOOLS } from './registry.js';

/**
 * A hosted tool's item a client sends back in `input` (the Agents SDK passes a turn's whole output back):
 * checked by its tool when the tool declares the type (`HostedTool.inputItems`), else kept as sent with
 * its id — the model is not shown it (its answer, which follows it, is).
 */
const passBack: HostedInputItem = {
  check(raw, at) {
    if (typeof raw.id !== 'string' || raw.id.length < 1 || raw.id.length > 200)
      throw invalid(`'${at}.id' must be the item's id (1 to 200 characters).`, `${at}.id`, 'invalid_value');
    return raw as HostedItem;
  },
};

/** How an input item of a hosted type is checked and read; undefined for a type that is no hosted item. */
export function hostedInputItem(type: string): HostedInputItem | undefined {
  if (!(HOSTED_ITEM_TYPES as readonly string[]).includes(type)) return undefined;
  for (const tool of HOSTED_TOOLS) {
    const own = tool.inputItems?.[type as HostedItemType];
    if (own) return own;
  }
  return passBack;
}
