// A process that logs through the batched destination, then ends as argv[2] says: the suite checks no line is lost.
import { logDestination } from '../../src/core/log.js';

// Opened as a served instance's banner opens it: Node then makes a pipe on fd 1 non-blocking, and a full pipe
// refuses writes (EAGAIN) rather than block them.
void process.stdout;
const out = logDestination('json', { batched: true });
const end = process.argv[2];
if (end === 'behind') {
  // 8 MB over many turns, to a reader that starts late: the pipe fills, and what it refuses waits its turn.
  // Characters of two to four bytes: a write the pipe takes in part may end inside one.
  const pad = 'é🦊€x'.repeat(40);
  let n = 0;
  const burst = () => {
    for (let i = 0; i < 500; i++, n++) out.write(`{"level":30,"n":${n},"pad":"${pad}","msg":"line"}\n`);
    if (n < 20_000) setTimeout(burst, 1);
  };
  burst();
} else if (end === 'mixed') {
  // Lines of every size and of characters UTF-8 writes in two to four bytes, one far larger than a batch.
  for (let n = 0; n < 3000; n++) {
    const text = n === 1500 ? 'é🦊'.repeat(60_000) : n % 7 === 0 ? '€'.repeat(n % 500) : 'a'.repeat(n % 300);
    out.write(`{"level":30,"n":${n},"text":"${text}","msg":"line"}\n`);
  }
} else {
  // Lines written in the same turn as the end: they are still pending when it comes.
  setTimeout(() => {
    for (let n = 0; n < 2000; n++) out.write(`{"level":30,"n":${n},"msg":"line"}\n`);
    if (end === 'throw') throw new Error('crash on purpose');
    if (end === 'reject') void Promise.reject(new Error('unhandled rejection on purpose'));
    if (end === 'exit') process.exit(3);
    // 'return': the event loop empties.
  }, 10);
}
