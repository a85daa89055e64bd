// Loaded into a hall process with `node --import bench/hall-phases-hook.mjs`
// by `bench/spawn-latency.ts --phases`: times the phases of sequential spawns
// inside the hall (frame read -> request to the fork server -> pid reported
// -> reply -> exit reported -> raider.done written) and every WAL fdatasync, and writes them as JSON to
// $BENCH_PHASES_OUT when the hall exits. Only meaningful for one run at a time.
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

const fdatasync = fs.fdatasync;
fs.fdatasync = function (fd, cb) {
  const t0 = now();
  return fdatasync.call(this, fd, (err) => {
    fdatasyncs.push(now() - t0);
    cb(err);
  });
};
syncBuiltinESMExports();

process.on('exit', () => {
  if (out) fs.writeFileSync(out, JSON.stringify({ runs, fdatasyncs }));
});
