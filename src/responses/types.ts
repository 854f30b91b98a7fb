/**
 * What other areas use of the responses area: the input items (their schemas, their reading into the
 * model's messages) and item pages, for the conversations area, which keeps items the same way; and
 * where a response is, for the dashboard's search.
 */
export { InputItem, ItemList, ItemListQuery, ItemResource, IncludeParam } from './input-schemas.js';
export { itemPage, type ItemSource } from './input-items.js';
export { readInput, type ConversationLink, type ItemEntry } from './inputs.js';
/** The project of a stored response, by its id alone (the dashboard's search). */
export { responseProject as locateResponse } from './store.js';
