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

// Its own small splitter: this file runs without the build, so it cannot use
// the hall's line reader. It keeps the same rule: a line longer than the cap
// (far beyond what exec accepts as arguments and environment) is reported and
// skipped to its end instead of growing this process without bound.
const MAX_REQUEST_CHARS = 8 * 1024 * 1024;
let buffer = '';
let skipping = false;

function request(line) {
  let parsed;
  try {
    parsed = JSON.parse(line);
  } catch {
    process.stderr.write(`raider-spawner: not a request: ${line.slice(0, 200)}\n`);
    return;
  }
  start(parsed);
}

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  // Only the new chunk is searched: a long line costs its length once, not its square.
  let start = 0;
  for (let nl = chunk.indexOf('\n', start); nl >= 0; nl = chunk.indexOf('\n', start)) {
    const line = buffer + chunk.slice(start, nl);
    buffer = '';
    start = nl + 1;
    if (skipping) skipping = false;
    else request(line);
  }
  if (skipping) return;
  buffer += chunk.slice(start);
  if (buffer.length > MAX_REQUEST_CHARS) {
    process.stderr.write(`raider-spawner: a request longer than ${MAX_REQUEST_CHARS} characters was skipped\n`);
    skipping = true;
    buffer = '';
  }
});
process.stdin.on('end', () => process.exit(0));
