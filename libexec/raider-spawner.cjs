'use strict';
/**
 * The hall's fork server: starts raider processes for the hall and reports
 * their exits. The hall's event loop is not blocked while a process starts,
 * and where posix_spawn is not to be had (spawn-process.cjs), Node's spawn
 * forks this small process, not the hall. Plain CommonJS, one optional
 * dependency (koffi, for posix_spawn): it starts fast and needs no TypeScript
 * loader.
 *
 * Protocol (one JSON object per line):
 *   stdin   {"id", "command", "args", "env", "cwd", "stdout", "stderr", "stderrPrefix"?}
 *   stdout  {"id", "pid"}            the process started
 *           {"id", "error"}          it could not be started
 *           {"id", "code", "signal"} it exited (its process group is killed first,
 *                                    and what it wrote on stderr is in the log)
 * With `stderrPrefix` the raider's stderr is a pipe to this process, which
 * appends it to the `stderr` file one line at a time, each line starting with
 * the prefix (the run id: parallel runs share one slot log). Without it, the
 * file itself is the raider's stderr.
 *
 * Its first argument is the pid of the hall that started it. A request read
 * after that hall died (it sat in the pipe while the hall was killed) is
 * refused, never carried out: the hall's run was committed and is reported
 * failed by whoever recovers it (the next hall, or on a shared cluster the
 * hall that takes over), so a raider started now would run unwatched, late,
 * and beside the next mission of its numbered slot or binding.
 *
 * It ends when its stdin ends (the hall is gone) and every raider it started
 * has ended: until then it still carries their stderr into the log, so a
 * raider the next hall adopts keeps a stderr that works. The raiders run in
 * their own process groups, for the next hall to adopt.
 */
const fs = require('node:fs');
const { linePrefixer } = require('./line-prefixer.cjs');
const { loadPosixSpawn, nodeStart } = require('./spawn-process.cjs');

// Once the hall is gone, its end of stdout (and maybe stderr) is closed: a
// report it can no longer read is dropped, this process goes on.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

// Ctrl-C in a terminal, or a service manager's SIGTERM, is for the hall: it
// still needs this process to hear how its raiders end while it shuts down.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => {});

/** The hall that started this process (none given: a test driving it by hand). */
const HALL_PID = Number(process.argv[2]) || null;

/**
 * How raiders are started (spawn-process.cjs): posix_spawn where it loads, else
 * Node's spawn. `--node-spawn` after the hall's pid asks for Node's (tests run both).
 */
const startProcess = (() => {
  if (process.argv[3] === '--node-spawn') return nodeStart;
  const posix = loadPosixSpawn();
  if (posix.start !== null) return posix.start;
  process.stderr.write(`raider-spawner: raiders are started with Node's spawn, about 1 ms slower each: ${posix.why}\n`);
  return nodeStart;
})();

/** Its hall died: this process was handed to another parent (init, or a subreaper). */
function hallGone() {
  return HALL_PID !== null && process.ppid !== HALL_PID;
}

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

/** Raiders started and not yet reported as ended. */
let running = 0;
let stdinEnded = false;

function exitWhenIdle() {
  if (stdinEnded && running === 0) process.exit(0);
}

/**
 * How long an exit report waits for the raider's stderr to end, after its
 * group was killed: only a process that left the group can hold it open so long.
 */
const STDERR_DRAIN_MS = 2000;
function start(request) {
  const { id } = request;
  if (hallGone()) {
    process.stderr.write(`raider-spawner: not starting ${request.command}: the hall that asked for it (pid ${HALL_PID}) is gone\n`);
    report({ id, error: `the hall (pid ${HALL_PID}) is gone` });
    return;
  }
  const prefixed = typeof request.stderrPrefix === 'string';
  let out;
  let err;
  let child;
  try {
    out = fs.openSync(request.stdout, 'w');
    err = fs.openSync(request.stderr, 'a');
    child = startProcess({
      command: request.command,
      args: request.args,
      env: request.env,
      cwd: request.cwd,
      stdout: out,
      stderr: prefixed ? 'pipe' : err,
    });
  } catch (e) {
    report({ id, error: e.message });
    return;
  } finally {
    if (out !== undefined) fs.closeSync(out);
    // The log stays open only for the prefixer of a process that started.
    if (err !== undefined && (!prefixed || child === undefined)) {
      fs.closeSync(err);
      err = undefined;
    }
  }
  const pid = child.pid;
  if (pid === undefined) {
    if (err !== undefined) fs.closeSync(err);
    child.onError((e) => report({ id, error: e.message }));
    return;
  }
  running++;
  let exit = null;
  let stderrOpen = prefixed;
  let reported = false;
  const finish = () => {
    if (reported || exit === null || stderrOpen) return;
    reported = true;
    report({ id, code: exit.code, signal: exit.signal });
    running--;
    exitWhenIdle();
  };
  if (prefixed) {
    const lines = linePrefixer(err, request.stderrPrefix);
    const fd = err;
    child.stderr.on('data', (chunk) => lines.push(chunk));
    child.stderr.on('error', () => {});
    child.stderr.once('close', () => {
      lines.end();
      fs.closeSync(fd);
      stderrOpen = false;
      finish();
    });
  }
  child.onExit((code, signal) => {
    // What the raider left behind in its group dies before its run counts as over.
    killGroup(pid);
    exit = { code, signal };
    if (stderrOpen) {
      // Its last lines are still in the pipe: the run ends once they are in the log.
      setTimeout(() => {
        stderrOpen = false;
        finish();
      }, STDERR_DRAIN_MS).unref();
    }
    finish();
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
process.stdin.on('end', () => {
  stdinEnded = true;
  exitWhenIdle();
});
