// A process that logs through the batched destination, then ends as argv[2] says: the suite checks no line is lost.
import { logDestination } from '../../src/core/log.js';

const out = logDestination('json', { batched: true });
const end = process.argv[2];
// Lines written in the same turn as the end: they are still pending when it comes.
setTimeout(() => {
  for (let n = 0; n < 2000; n++) out.write(`{"level":30,"n":${n},"msg":"line"}\n`);
  if (end === 'throw') throw new Error('crash on purpose');
  if (end === 'reject') void Promise.reject(new Error('unhandled rejection on purpose'));
  if (end === 'exit') process.exit(3);
  // 'return': the event loop empties.
}, 10);
