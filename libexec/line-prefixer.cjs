'use strict';
/**
 * A raider's stderr into its slot log, each line with the run id in front:
 * the fork server (raider-spawner.cjs) pushes what it reads from a raider's
 * stderr pipe, the hall what it reads from a raider's stderr spool
 * (src/adapters/os/stderr-spool.ts). Plain CommonJS, nothing but node:fs.
 */
const fs = require('node:fs');

/** The bytes of one stderr line kept in the log: a longer line is cut (its rest is skipped), so no raider grows this process. */
const LINE_CAP = 16 * 1024;
const NEWLINE = Buffer.from('\n');

/** Where a cut text ends without the bytes of a UTF-8 character it cut in two (a cut line must not end in a broken character). */
function wholeCharactersEnd(bytes) {
  let lead = bytes.length - 1;
  while (lead > 0 && bytes.length - lead < 4 && (bytes[lead] & 0xc0) === 0x80) lead--;
  if (lead < 0) return bytes.length;
  const b = bytes[lead];
  const size = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return lead + size > bytes.length ? lead : bytes.length;
}

/**
 * Appends a stream (a raider's stderr) to a file descriptor, each line with
 * `prefix` in front: one write per chunk read, of whole lines only, so lines
 * of parallel runs never mix within a line (the file is opened for append).
 * Bytes go through as they are (invalid UTF-8 too); a line longer than
 * LINE_CAP keeps its head, cut at a character boundary, with a note.
 */
function linePrefixer(fd, prefix) {
  const head = Buffer.from(prefix);
  /** The line being read: at most LINE_CAP bytes of it. */
  let pending = [];
  let pendingBytes = 0;
  /** Bytes of the current line beyond LINE_CAP, skipped. */
  let skipped = 0;

  function take(piece) {
    const room = LINE_CAP - pendingBytes;
    if (piece.length > room) {
      skipped += piece.length - Math.max(room, 0);
      piece = piece.subarray(0, Math.max(room, 0));
    }
    if (piece.length === 0) return;
    // A copy: a piece kept past its chunk must not hold the whole chunk.
    pending.push(Buffer.from(piece));
    pendingBytes += piece.length;
  }

  function line() {
    let body = Buffer.concat(pending, pendingBytes);
    const parts = [head];
    if (skipped > 0) {
      const end = wholeCharactersEnd(body);
      const cut = skipped + body.length - end;
      body = body.subarray(0, end);
      parts.push(body, Buffer.from(` [... ${cut} more bytes of this line cut]`), NEWLINE);
    } else parts.push(body, NEWLINE);
    pending = [];
    pendingBytes = 0;
    skipped = 0;
    return parts;
  }

  function write(parts) {
    if (parts.length === 0) return;
    try {
      fs.writeSync(fd, Buffer.concat(parts));
    } catch {
      // A full disk or a removed log: these lines are lost, the run goes on.
    }
  }

  return {
    push(chunk) {
      const out = [];
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
        // A whole line within this chunk (the usual case) goes out as a view of it, uncopied.
        if (pendingBytes === 0 && skipped === 0 && nl - start <= LINE_CAP) out.push(head, chunk.subarray(start, nl + 1));
        else {
          take(chunk.subarray(start, nl));
          out.push(...line());
        }
        start = nl + 1;
      }
      take(chunk.subarray(start));
      write(out);
    },
    /** The stream ended: a last line without its newline is written with one. */
    end() {
      if (pendingBytes > 0 || skipped > 0) write(line());
    },
  };
}

module.exports = { linePrefixer, LINE_CAP };
