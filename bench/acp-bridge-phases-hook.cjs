// Loaded into an ACP bridge with `node --require bench/acp-bridge-phases-hook.cjs`
// by bench/acp-bridge-phases.ts (CommonJS, so that it loads no ESM loader). It
// notes, in epoch ms: when Node has started (this hook runs), when the bridge
// spawns its agent (its modules are loaded), when each ACP request goes to the
// agent and its answer comes back, and the first session/update; at exit it
// writes them, and the CPU time the bridge used (cpuMs), as JSON to $BENCH_PHASES_OUT. On SIGUSR2 it writes
// process.memoryUsage() and V8's heap spaces to $BENCH_PHASES_OUT.mem.
'use strict';
const fs = require('node:fs');
const v8 = require('node:v8');
const childProcess = require('node:child_process');

const out = process.env.BENCH_PHASES_OUT;
const now = () => performance.timeOrigin + performance.now();
const marks = { origin: performance.timeOrigin, hook: now() };
const mark = (name) => {
  if (marks[name] === undefined) marks[name] = now();
};

if (out) {
  const spawn = childProcess.spawn;
  childProcess.spawn = function benchSpawn(...args) {
    mark('agentSpawn');
    const child = spawn.apply(this, args);
    const sent = new Map();
    const write = child.stdin.write;
    child.stdin.write = function benchWrite(chunk, ...rest) {
      for (const m of Buffer.from(chunk)
        .toString('utf8')
        .matchAll(/"id":(\d+)[^\n]*?"method":"([^"]+)"|"method":"([^"]+)"[^\n]*?"id":(\d+)/g)) {
        const id = m[1] ?? m[4];
        const method = m[2] ?? m[3];
        sent.set(id, method);
        mark(`sent ${method}`);
      }
      return write.call(this, chunk, ...rest);
    };
    child.stdout.prependListener('data', (chunk) => {
      const text = String(chunk);
      for (const m of text.matchAll(/"id":(\d+)/g)) {
        const method = sent.get(m[1]);
        if (method !== undefined) mark(`answered ${method}`);
      }
      if (text.includes('"session/update"')) mark('first update');
    });
    return child;
  };
  process.on('exit', () => {
    mark('exit');
    const cpu = process.cpuUsage();
    marks.cpuMs = (cpu.user + cpu.system) / 1000;
    fs.writeFileSync(out, JSON.stringify(marks));
  });
  process.on('SIGUSR2', () => {
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
    // Whole or not at all: the bench reads it as soon as it is there.
    fs.writeFileSync(`${out}.mem.tmp`, JSON.stringify({ usage: process.memoryUsage(), spaces }));
    fs.renameSync(`${out}.mem.tmp`, `${out}.mem`);
  });
}
