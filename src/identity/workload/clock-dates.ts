/**
 * The one place this folder turns Standin clock milliseconds into a Date: jose (`currentDate`) takes a
 * Date, and it must see the movable clock, not the wall clock.
 */
export const dateAt = (ms: number): Date => new Date(ms);
