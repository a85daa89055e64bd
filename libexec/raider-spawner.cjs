'use strict';
/**
 * The hall's fork server: starts raider processes for the hall and reports
 * their exits. A fork copies the page tables of the process that forks, so
 * forking from this small process costs a few milliseconds less per run than
 * forking from the hall, and the hall's event loop is not blocked while it
 * happens. Plain CommonJS without dependencies: it starts fast and needs no
 * TypeScript loader.
 *
 * Protocol (one JSON object per line):
 *   stdin   {"id", "command", "args", "env", "cwd", "stdout", "stderr"}
 *   stdout  {"id", "pid"}            the process started
 *           {"id", "error"}          it could not be started
 *           {"id", "code", "signal"} it exited (its process group is killed first)
 * It ends when its stdin ends (the hall is gone); the raiders it started keep
 * running in their own process groups, for the next hall to adopt.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');

// Ctrl-C in a terminal, or a service manager's SIGTERM, is for the hall: it
// still needs this process to hear how its raiders end while it shuts down.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => {});

function report(message) {
  // Synchronous for a pipe on Linux: a pid is always reported before its exit.
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function killGroup(pgid) {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // No process left in the group.
  } finally {
    Error.stackTraceLimit = limit;
  }
}

function start(request) {
  const { id } = request;
  let out;
  let err;
  let child;
  try {
    out = fs.openSync(request.stdout, 'w');
    err = fs.openSync(request.stderr, 'a');
    child = spawn(request.command, request.args, {
      cwd: request.cwd,
      env: request.env,
      stdio: ['ignore', out, err],
      detached: true,
    });
  } catch (e) {
    report({ id, error: e.message });
    return;
  } finally {
    if (out !== undefined) fs.closeSync(out);
    if (err !== undefined) fs.closeSync(err);
  }
  const pid = child.pid;
  if (pid === undefined) {
    child.once('error', (e) => report({ id, error: e.message }));
    return;
  }
  child.on('error', () => {});
  child.once('exit', (code, signal) => {
    // What the raider left behind in its group dies before its run counts as over.
    killGroup(pid);
    report({ id, code, signal });
  });
  report({ id, pid });
}

let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let nl;
  while ((nl = buffer.indexOf('\n')) >= 0) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    let request;
    try {
      request = JSON.parse(line);
    } catch {
      process.stderr.write(`raider-spawner: not a request: ${line.slice(0, 200)}\n`);
      continue;
    }
    start(request);
  }
});
process.stdin.on('end', () => process.exit(0));
