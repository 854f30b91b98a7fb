/**
 * The database type. It is empty here: each area adds its own tables beside their migrations, by
 * declaration merging, so the store knows no area:
 *
 *     declare module '../store/schema.js' { interface DB extends AdsTables {} }
 *
 * An area reads and writes only its own tables; other areas reach them through its service functions.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface DB {}
