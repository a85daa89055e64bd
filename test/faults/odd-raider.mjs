#!/usr/bin/env node
// A raider for the fault tests: it misbehaves in the ways a real process can.
// The mission (the argument after `--`) says how:
//   big MEGABYTES       that much noise on stdout (1 KiB lines), then answer
//   long-lines MB       a MB-long line of noise, a MB-long `message` event, lines of
//                       invalid UTF-8, then the result, then a torn line of invalid UTF-8
//   huge-result MB      a result whose response is MB megabytes long (some of it non-ASCII)
//   bad-utf8-result     a result line with an invalid UTF-8 byte inside its response
//   deaf-orphan         leave a child that ignores SIGINT and SIGTERM in the process group,
//                       ignore both signals too, and never finish
//   orphan              leave such a child, answer, exit
//   until FILE          answer once FILE exists
// Every other mission is answered at once. Children print their pid as `child PID`
// in a `message` event, so a test can look for them afterwards.
import { spawn } from 'node:child_process';
import fs from 'node:fs';

const args = process.argv.slice(2);
const dash = args.indexOf('--');
const mission = dash >= 0 ? args.slice(dash + 1).join(' ') : '';
const [verb, ...rest] = mission.split(' ');
const arg = rest.join(' ');
let seq = 0;

/** Writes everything synchronously: stdout is a file, and nothing may be lost at exit. */
function out(data) {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let at = 0;
  while (at < buf.length) at += fs.writeSync(1, buf, at, buf.length - at);
}

function line(type, fields = {}) {
  const event = { ...fields, version: 1, type, seq: ++seq, time: Date.now() / 1000 };
  const sorted = Object.fromEntries(
    Object.keys(event)
      .sort()
      .map((k) => [k, event[k]]),
  );
  return `${JSON.stringify(sorted)}\n`;
}

function answer(response) {
  out(line('message', { role: 'assistant', content: typeof response === 'string' ? response.slice(0, 200) : 'x' }));
  out(line('run.finished', { status: 'completed', response, elapsed: 0.01 }));
  process.exit(0);
}

/** A child in our process group that ignores SIGINT and SIGTERM (ignored signals stay ignored across exec). */
function stubbornChild() {
  const child = spawn('/bin/sh', ['-c', "trap '' INT TERM; exec sleep 60"], { stdio: 'ignore' });
  child.unref();
  out(line('message', { role: 'assistant', content: `child ${child.pid}` }));
  return child.pid;
}

out(line('run.started', { engine: 'odd' }));

switch (verb) {
  case 'big': {
    const chunk = Buffer.from(`${'x'.repeat(1023)}\n`.repeat(1024));
    for (let i = 0; i < Number(arg || 1); i++) out(chunk);
    answer(`wrote ${arg} MB`);
    break;
  }
  case 'long-lines': {
    const mb = Number(arg || 10) * 1024 * 1024;
    out(`${'n'.repeat(mb)}\n`);
    out(line('message', { role: 'assistant', content: 'm'.repeat(mb) }));
    out(Buffer.from([0xff, 0xfe, 0x7b, 0x22, 0xc0, 0xaf, 0x0a]));
    out(Buffer.concat([Buffer.from('{"type":"message","content":"'), Buffer.from([0xed, 0xa0, 0x80, 0x80]), Buffer.from('"}\n')]));
    out(Buffer.concat([Buffer.from('{"type":"run.finished","status":"failed","error":"'), Buffer.from([0xff]), Buffer.from('"}\n')]));
    out(line('run.finished', { status: 'completed', response: 'ok after long lines', elapsed: 0.01 }));
    out(Buffer.from([0xe2, 0x82]));
    process.exit(0);
    break;
  }
  case 'huge-result': {
    const n = Number(arg || 10) * 1024 * 1024;
    answer(`ü${'y'.repeat(n - 4)}日`);
    break;
  }
  case 'bad-utf8-result':
    out(
      Buffer.concat([
        Buffer.from('{"elapsed":0.01,"response":"caf'),
        Buffer.from([0xe9]),
        Buffer.from(' au lait","status":"completed","type":"run.finished","version":1}\n'),
      ]),
    );
    process.exit(0);
    break;
  case 'deaf-orphan':
    process.on('SIGINT', () => {});
    process.on('SIGTERM', () => {});
    stubbornChild();
    setInterval(() => {}, 60_000);
    break;
  case 'orphan':
    answer(`child ${stubbornChild()}`);
    break;
  case 'until': {
    const timer = setInterval(() => {
      if (!fs.existsSync(arg)) return;
      clearInterval(timer);
      answer(`saw ${arg}`);
    }, 20);
    break;
  }
  default:
    answer(`did: ${mission}`);
}
