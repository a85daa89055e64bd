// Loaded into a hall process with `node --import bench/hall-phases-hook.mjs`
// by `bench/spawn-latency.ts --phases`: times the phases of sequential spawns
// inside the hall (frame read -> spawn() -> reply -> exit -> raider.done
// written) and every WAL fdatasync, and writes them as JSON to
// $BENCH_PHASES_OUT when the hall exits. Only meaningful for one run at a time.
import cp from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { syncBuiltinESMExports } from 'node:module';

const out = process.env.BENCH_PHASES_OUT;
const now = () => performance.now();
const runs = [];
const fdatasyncs = [];

const emit = net.Socket.prototype.emit;
net.Socket.prototype.emit = function (event, chunk, ...rest) {
  if (event === 'data' && chunk && String(chunk).includes('"cmd":"spawn"')) runs.push({ arrive: now() });
  return emit.call(this, event, chunk, ...rest);
};

const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (data, ...rest) {
  const run = runs[runs.length - 1];
  if (run && typeof data === 'string') {
    if (run.reply === undefined && data.includes('"events_path"')) run.reply = now();
    if (run.done === undefined && data.includes('"type":"raider.done"')) run.done = now();
  }
  return write.call(this, data, ...rest);
};

const spawn = cp.spawn;
cp.spawn = function (...args) {
  const run = runs[runs.length - 1];
  const t0 = now();
  const child = spawn.apply(this, args);
  if (run && run.spawnStart === undefined) {
    run.spawnStart = t0;
    run.spawnEnd = now();
    child.once('exit', () => (run.exit = now()));
  }
  return child;
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
