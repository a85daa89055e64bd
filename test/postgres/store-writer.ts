/**
 * A writer for the crash test: opens a PostgresStateStore on the URL in argv,
 * queues missions into one slot as fast as it can, and prints the id of each
 * once its commit resolved. The test kills it with SIGKILL mid-stream.
 */
import { PostgresStateStore } from '../../src/adapters/storage/postgres/postgres-state-store.js';

const [url, hallId] = process.argv.slice(2);
if (!url || !hallId) throw new Error('usage: store-writer URL HALL_ID');
const store = await PostgresStateStore.open(
  { url, where: 'the test database', cluster: 'crash', hallId, shared: false, leaseMs: 15_000 },
  { root: '/crash-test', warn: (line) => process.stderr.write(`${line}\n`) },
);
for (let i = 0; ; i++) {
  const burst: string[] = [];
  for (let j = 0; j < 20; j++) {
    const id = `m-${i}-${j}`;
    store.apply({ op: 'queue', queue: { kind: 'slot', slot: '1crash' }, entry: { id, name: '1crash', mission: `mission ${id}` } });
    burst.push(id);
  }
  await store.commit();
  process.stdout.write(`${burst.join('\n')}\n`);
}
