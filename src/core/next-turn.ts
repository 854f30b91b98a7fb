/**
 * A turn of the event loop for other work: long work done a piece at a time (SQLite's statements, which
 * run on the server's thread; large messages to a process) waits here between its pieces, so requests
 * are answered meanwhile.
 */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
