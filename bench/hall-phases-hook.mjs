// Loaded into a hall process with `node --import bench/hall-phases-hook.mjs`
// by `bench/spawn-latency.ts --phases`: times the phases of sequential spawns
// inside the hall (frame read -> start asked for -> pid reported -> reply ->
// exit reported -> raider.done written) and every WAL fdatasync, and writes
// them as JSON to $BENCH_PHASES_OUT when the hall exits. Only meaningful for
// one run at a time. A start is asked for when the hall opens the raider's
// stdout for posix_spawn (src/adapters/os/hall-spawner.ts), or writes the
// request to its fork server; its pid is reported when the hall closes that
// file again (the start's callback) or reads the fork server's report; its
// exit when the hall kills what is left of its group, or reads that report.
import fs from 'node:fs';
import net from 'node:net';
import { syncBuiltinESMExports } from 'node:module';

const out = process.env.BENCH_PHASES_OUT;
const now = () => performance.now();
const runs = [];
const fdatasyncs = [];

// Frames from clients, and the fork server's reports (its stdout is a pipe, also a net.Socket).
const emit = net.Socket.prototype.emit;
net.Socket.prototype.emit = function (event, chunk, ...rest) {
  if (event === 'data' && chunk) {
    const text = String(chunk);
    if (text.includes('"cmd":"spawn"')) runs.push({ arrive: now() });
    const run = runs[runs.length - 1];
    if (run && run.spawnStart !== undefined) {
      if (run.spawnEnd === undefined && text.includes('"pid":')) run.spawnEnd = now();
      if (run.exit === undefined && text.includes('"code":')) run.exit = now();
    }
  }
  return emit.call(this, event, chunk, ...rest);
};

// Replies and events to clients, and the spawn requests to the fork server.
const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (data, ...rest) {
  const run = runs[runs.length - 1];
  if (run && typeof data === 'string') {
    if (run.spawnStart === undefined && data.includes('"stdout":')) run.spawnStart = now();
    if (run.reply === undefined && data.includes('"events_path"')) run.reply = now();
    if (run.done === undefined && data.includes('"type":"raider.done"')) run.done = now();
  }
  return write.call(this, data, ...rest);
};

// The hall's own starts: stdout opened just before posix_spawn, closed in its callback (the pid known);
// the group killed when the exit is seen.
let startFd;
const openSync = fs.openSync;
fs.openSync = function (file, flags, ...rest) {
  const fd = openSync.call(this, file, flags, ...rest);
  const run = runs[runs.length - 1];
  if (run && run.spawnStart === undefined && flags === 'w' && String(file).endsWith('.events.jsonl')) {
    run.spawnStart = now();
    startFd = fd;
  }
  return fd;
};
const closeSync = fs.closeSync;
fs.closeSync = function (fd, ...rest) {
  if (fd === startFd) {
    startFd = undefined;
    const run = runs[runs.length - 1];
    if (run && run.spawnEnd === undefined) run.spawnEnd = now();
  }
  return closeSync.call(this, fd, ...rest);
};
const kill = process.kill;
process.kill = function (pid, signal) {
  const run = runs[runs.length - 1];
  if (pid < 0 && signal === 'SIGKILL' && run && run.spawnEnd !== undefined && run.exit === undefined) run.exit = now();
  return kill.call(this, pid, signal);
};

const fdatasync = fs.fdatasync;
fs.fdatasync = function (fd, cb) {
  const t0 = now();
  return fdatasync.call(this, fd, (err) => {
    fdatasyncs.push(now() - t0);
    cb(err);
  });
};
// The log's syncs on the event loop (write-ahead-log.ts: while they are fast), timed the same.
const fdatasyncSync = fs.fdatasyncSync;
fs.fdatasyncSync = function (fd) {
  const t0 = now();
  try {
    return fdatasyncSync.call(this, fd);
  } finally {
    fdatasyncs.push(now() - t0);
  }
};
syncBuiltinESMExports();

process.on('exit', () => {
  if (out) fs.writeFileSync(out, JSON.stringify({ runs, fdatasyncs }));
});
