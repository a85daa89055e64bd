'use strict';
/**
 * How the fork server starts one raider process: glibc's posix_spawn, called
 * through koffi (a foreign-function library whose npm package carries its
 * binaries) when both load, else Node's child_process.spawn. Node's spawn
 * forks the whole Node process (libuv forks, it does not vfork): about 1 ms
 * on a small VM, on the path of every started run's reply; posix_spawn
 * starts the process without copying this one: about 0.1 ms.
 *
 * Both ways start the process alike (docs/architecture.md, "Starting a
 * raider"): `command` found as execvp finds it, in the PATH of the raider's
 * environment; stdin /dev/null; stdout and stderr the given descriptors, or
 * stderr a pipe to this process; a session (so a process group) of its own;
 * every signal at its default and none blocked; the working directory `cwd`;
 * exactly the environment `env`. A process that cannot be started throws an
 * Error whose message is Node's (`spawn COMMAND ENOENT`).
 *
 * nodeStart and loadPosixSpawn().start({ command, args, env, cwd, stdout, stderr }) return
 *   { pid, stderr: Readable | null, onExit(listener(code, signal)) }, or
 * (posix_spawn only, with `stdin: 'socket'`: stdin one end of a socket pair) also stdin: the other end, a Duplex; or
 *   { pid: undefined, onError(listener(error)) } when Node tells a failure later,
 * or throw. loadPosixSpawn().startAsync(request, done(error, started)) starts it
 * from a worker thread (the hall's way: its event loop never waits for an exec).
 */
const childProcess = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

/** Node's spawn: the way that works wherever Node does. */
function nodeStart({ command, args, env, cwd, stdout, stderr }) {
  const child = childProcess.spawn(command, args, {
    cwd,
    env,
    stdio: ['ignore', stdout, stderr === 'pipe' ? 'pipe' : stderr],
    detached: true,
  });
  // Node tells a failed start as an 'error' event, on the next tick.
  if (child.pid === undefined) return { pid: undefined, onError: (listener) => child.once('error', listener) };
  child.on('error', () => {});
  return {
    pid: child.pid,
    stderr: child.stderr,
    onExit: (listener) => child.once('exit', listener),
  };
}

/** glibc's constants and structure sizes (x86_64 and aarch64 alike; a larger buffer is harmless). */
const O_RDONLY = 0;
const F_OK = 0;
const AF_UNIX = 1;
const SOCK_STREAM = 1;
const SOCK_CLOEXEC = 0o2000000;
const POSIX_SPAWN_SETSIGDEF = 0x04;
const POSIX_SPAWN_SETSIGMASK = 0x08;
const POSIX_SPAWN_SETSID = 0x80;
const WNOHANG = 1;
const FILE_ACTIONS_BYTES = 256;
const SPAWNATTR_BYTES = 1024;
const SIGSET_BYTES = 256;

/** Errno numbers to their names (ENOENT), for Node's wording of a failed start. */
const ERRNO_NAMES = new Map(Object.entries(os.constants.errno).map(([name, number]) => [number, name]));
const SIGNAL_NAMES = new Map(Object.entries(os.constants.signals).map(([name, number]) => [number, name]));

/** The failures Node's spawn tells as an 'error' event, naming the command; it throws the others as `spawn CODE`. */
const NAMED_FAILURES = new Set(['ENOENT', 'EACCES', 'EAGAIN', 'EMFILE', 'ENFILE']);

/** A failed start in Node's words (the fork server reports the message). */
function spawnError(command, errno) {
  const code = ERRNO_NAMES.get(errno) ?? `Unknown system error ${errno}`;
  return new Error(NAMED_FAILURES.has(code) ? `spawn ${command} ${code}` : `spawn ${code}`);
}

const { EACCES, ENOENT, ENOEXEC } = os.constants.errno;

/** Errors after which execvp goes on to the next directory of PATH (glibc's list). */
const LOOK_FURTHER = new Set(['ENOENT', 'ENOTDIR', 'ESTALE', 'ENODEV', 'ETIMEDOUT'].map((name) => os.constants.errno[name]));

/**
 * A request read as Node's spawn reads its arguments: no args is none, each
 * arg a string, no env the fork server's, no (or an empty) cwd its own; what
 * Node refuses is refused in its words. A NUL is refused too: a C string ends
 * there, so a mission with one would reach the raider cut short.
 */
function normalised({ command, args, env, cwd }) {
  if (typeof command !== 'string') throw new TypeError('The "file" argument must be of type string');
  if (command === '') throw new TypeError("The argument 'file' cannot be empty");
  if (args != null && !Array.isArray(args)) throw new TypeError('The "args" argument must be an instance of Array');
  const argStrings = args == null ? [] : args.map(String);
  if (env != null && typeof env !== 'object') throw new TypeError('The "options.env" property must be of type object');
  if (cwd != null && typeof cwd !== 'string') throw new TypeError('The "options.cwd" property must be of type string');
  const nul = (text) => text.includes('\0');
  if (nul(command)) throw new TypeError("The argument 'file' must be a string without null bytes");
  const arg = argStrings.findIndex(nul);
  if (arg >= 0) throw new TypeError(`The argument 'args[${arg}]' must be a string without null bytes`);
  const environment = env ?? process.env;
  const envp = [];
  for (const [key, value] of Object.entries(environment)) {
    if (value === undefined) continue;
    const pair = `${key}=${value}`;
    if (nul(pair))
      throw new TypeError(`The property 'options.env['${key.replaceAll('\0', '\\x00')}']' must be a string without null bytes`);
    envp.push(pair);
  }
  if (typeof cwd === 'string' && nul(cwd)) throw new TypeError("The property 'options.cwd' must be a string without null bytes");
  const searchPath = environment.PATH;
  return {
    command,
    args: argStrings,
    envp,
    cwd: cwd === '' || cwd == null ? undefined : cwd,
    searchPath: typeof searchPath === 'string' ? searchPath : undefined,
  };
}

/** posix_spawn through koffi, or null (with why) where koffi or one of these glibc functions is missing. */
function loadPosixSpawn() {
  let libc;
  try {
    if (process.platform !== 'linux') return { start: null, why: `no posix_spawn path on ${process.platform}` };
    const koffi = require('koffi');
    const lib = koffi.load('libc.so.6');
    libc = {
      posixSpawn: lib.func('int posix_spawn(void *pid, const char *path, void *actions, void *attr, const char **argv, const char **envp)'),
      actionsInit: lib.func('int posix_spawn_file_actions_init(void *actions)'),
      actionsDestroy: lib.func('int posix_spawn_file_actions_destroy(void *actions)'),
      addOpen: lib.func('int posix_spawn_file_actions_addopen(void *actions, int fd, const char *path, int flags, int mode)'),
      addDup2: lib.func('int posix_spawn_file_actions_adddup2(void *actions, int fd, int newfd)'),
      addChdir: lib.func('int posix_spawn_file_actions_addchdir_np(void *actions, const char *path)'),
      attrInit: lib.func('int posix_spawnattr_init(void *attr)'),
      setFlags: lib.func('int posix_spawnattr_setflags(void *attr, short flags)'),
      setSigDefault: lib.func('int posix_spawnattr_setsigdefault(void *attr, const void *sigset)'),
      setSigMask: lib.func('int posix_spawnattr_setsigmask(void *attr, const void *sigset)'),
      sigFillSet: lib.func('int sigfillset(void *sigset)'),
      sigEmptySet: lib.func('int sigemptyset(void *sigset)'),
      socketpair: lib.func('int socketpair(int domain, int type, int protocol, void *fds)'),
      waitpid: lib.func('int waitpid(int pid, void *status, int options)'),
      access: lib.func('int access(const char *path, int mode)'),
      errno: () => koffi.errno(),
    };
  } catch (err) {
    // One line for the hall's log: Node's "Cannot find module" goes on with its require stack.
    const why = err.code === 'MODULE_NOT_FOUND' ? 'koffi is not installed (an optional dependency)' : String(err.message).split('\n')[0];
    return { start: null, why };
  }

  // One set of attributes for every process: all signals at their default (this
  // process ignores SIGPIPE and catches SIGINT/SIGTERM/SIGHUP), none blocked, setsid.
  const attr = Buffer.alloc(SPAWNATTR_BYTES);
  const all = Buffer.alloc(SIGSET_BYTES);
  const none = Buffer.alloc(SIGSET_BYTES);
  if (libc.sigFillSet(all) !== 0) return { start: null, why: 'sigfillset failed' };
  // sigfillset leaves out glibc's two internal signals (32 and 33), which posix_spawn then
  // sets to be ignored, and an ignored signal stays ignored through exec. Node's spawn leaves
  // them at their default: so does this (bits 31 and 32 of the set's first word).
  if (os.endianness() === 'LE') all.writeBigUInt64LE(all.readBigUInt64LE(0) | (1n << 31n) | (1n << 32n), 0);
  if (
    libc.attrInit(attr) !== 0 ||
    libc.sigEmptySet(none) !== 0 ||
    libc.setSigDefault(attr, all) !== 0 ||
    libc.setSigMask(attr, none) !== 0 ||
    libc.setFlags(attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSID) !== 0
  )
    return { start: null, why: 'posix_spawnattr could not be set up' };

  /** Processes started and not yet reaped: their exit listeners. */
  const running = new Map();
  const status = Buffer.alloc(4);
  // Node's spawn keeps this process's event loop alive while a child runs; a child of
  // posix_spawn is no handle of Node's, so a timer does (nothing else may be left: a raider
  // can close its stderr and run on after the hall's stdin has ended).
  let keepAlive = null;
  const watch = (pid, listener) => {
    running.set(pid, listener);
    keepAlive ??= setInterval(() => {}, 2 ** 30);
  };
  const reaped = (pid) => {
    running.delete(pid);
    if (running.size > 0 || keepAlive === null) return;
    clearInterval(keepAlive);
    keepAlive = null;
  };
  // SIGCHLD says some child changed; each of ours is asked (never waitpid(-1): that
  // could reap a child of Node's own spawn, which then never reports its exit).
  /** Reaps `pid` if it has ended, and tells its listener how. */
  const reap = (pid, listener) => {
    if (libc.waitpid(pid, status, WNOHANG) !== pid) return;
    reaped(pid);
    const raw = status.readInt32LE(0);
    const termSignal = raw & 0x7f;
    if (termSignal === 0) listener((raw >> 8) & 0xff, null);
    else if (termSignal !== 0x7f) listener(null, SIGNAL_NAMES.get(termSignal) ?? null);
  };
  process.on('SIGCHLD', () => {
    for (const [pid, listener] of running) reap(pid, listener);
  });

  /**
   * Where execvp looks for `command`: as it is when it has a slash, else in
   * each directory of PATH (glibc's default without one), joined as execvp
   * joins them (`dir/command`, nothing normalised; an empty entry is the
   * working directory).
   */
  function candidates(command, searchPath) {
    if (command.includes('/')) return [command];
    return (searchPath ?? '/bin:/usr/bin').split(':').map((dir) => (dir === '' ? command : `${dir}/${command}`));
  }

  /**
   * Why a file cannot be run, seen without starting a process (0: it is there):
   * the kernel's own answer, as execve would give it. Not fs.statSync with
   * throwIfNoEntry: from Node 22 on, that hides ENOTDIR (a/file/x) as "no entry",
   * where Node's spawn, on every version, says ENOTDIR.
   */
  function missing(file, cwd) {
    return libc.access(path.resolve(cwd ?? process.cwd(), file), F_OK) === 0 ? 0 : libc.errno();
  }

  /**
   * Starts the process of `request`, running posix_spawn for each file tried
   * at once (start) or, `onThread`, on a worker thread of libuv's pool
   * (startAsync); `done(error, started)` hears the end, once. What is wrong
   * with the request itself is thrown at once either way.
   */
  function attempt(request, onThread, done) {
    const { command, args, envp, cwd, searchPath } = normalised(request);
    const { stdout, stderr } = request;
    let pipe = null;
    if (stderr === 'pipe') {
      // A socket pair, as Node's spawn makes for a 'pipe': the raider's stderr is the same kind of file either way.
      const fds = Buffer.alloc(8);
      if (libc.socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) !== 0) throw spawnError(command, libc.errno());
      pipe = { read: fds.readInt32LE(0), write: fds.readInt32LE(4) };
    }
    // stdin 'socket': one end of a socket pair, the other ours (a warm bridge's: it hears its run there,
    // and our end's close, at our exit whatever kind, is its end). Close-on-exec: no other child inherits ours.
    let input = null;
    if (request.stdin === 'socket') {
      const fds = Buffer.alloc(8);
      if (libc.socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) !== 0) {
        if (pipe !== null) for (const fd of [pipe.read, pipe.write]) fs.closeSync(fd);
        throw spawnError(command, libc.errno());
      }
      input = { ours: fds.readInt32LE(0), child: fds.readInt32LE(4) };
    }
    const actions = Buffer.alloc(FILE_ACTIONS_BYTES);
    libc.actionsInit(actions);
    const finish = (err, started) => {
      libc.actionsDestroy(actions);
      if (pipe !== null) fs.closeSync(pipe.write);
      if (err !== null && pipe !== null) fs.closeSync(pipe.read);
      if (input !== null) fs.closeSync(input.child);
      if (err !== null && input !== null) fs.closeSync(input.ours);
      done(err, started);
    };
    try {
      for (const rc of [
        input !== null ? libc.addDup2(actions, input.child, 0) : libc.addOpen(actions, 0, '/dev/null', O_RDONLY, 0),
        libc.addDup2(actions, stdout, 1),
        libc.addDup2(actions, pipe !== null ? pipe.write : stderr, 2),
        ...(cwd !== undefined ? [libc.addChdir(actions, cwd)] : []),
      ])
        if (rc !== 0) throw spawnError(command, rc);
    } catch (err) {
      finish(err, null);
      return;
    }
    envp.push(null);
    const pidOut = Buffer.alloc(4);
    const spawn = (file, argv, callback) => {
      if (!onThread) {
        callback(libc.posixSpawn(pidOut, file, actions, attr, argv, envp));
        return;
      }
      // Its arguments are copied now; the buffers it writes to (pidOut, actions) live in this closure until it ends.
      libc.posixSpawn.async(pidOut, file, actions, attr, argv, envp, (err, rc) => {
        if (err) finish(err, null);
        else callback(rc);
      });
    };
    const files = candidates(command, searchPath);
    // As execvp: a file that is not there is looked for further on; one that is there but
    // may not be run is remembered, and said if nothing else runs; else the last error.
    let denied = false;
    let last = ENOENT;
    let tried = 0;
    const settle = (rc) => {
      if (rc === 0) {
        const pid = pidOut.readInt32LE(0);
        // Its exit comes on a later turn (SIGCHLD): the caller hears it if it listens in this one, as with Node's 'exit'.
        let onExit = () => {};
        const listener = (code, signal) => onExit(code, signal);
        watch(pid, listener);
        // Started on a worker thread, it may have ended before it was watched: its SIGCHLD found nobody.
        setImmediate(() => {
          if (running.get(pid) === listener) reap(pid, listener);
        });
        finish(null, {
          pid,
          stderr: pipe !== null ? new net.Socket({ fd: pipe.read, readable: true, writable: false }) : null,
          stdin: input !== null ? new net.Socket({ fd: input.ours, readable: true, writable: true }) : null,
          onExit: (l) => {
            onExit = l;
          },
        });
        return;
      }
      if (rc === EACCES) denied = true;
      else if (!LOOK_FURTHER.has(rc)) {
        finish(spawnError(command, rc), null);
        return;
      }
      last = rc;
      next();
    };
    const next = () => {
      if (tried === files.length) {
        finish(spawnError(command, denied ? EACCES : last), null);
        return;
      }
      const file = files[tried++];
      // Each file is looked at first: a start that fails is a process made for nothing.
      const missingRc = missing(file, cwd);
      if (missingRc !== 0) {
        settle(missingRc);
        return;
      }
      spawn(file, [command, ...args, null], (rc) => {
        // As execvp: an executable file that is no program (a script without `#!`) is run by /bin/sh.
        if (rc === ENOEXEC) spawn('/bin/sh', ['/bin/sh', file, ...args, null], settle);
        else settle(rc);
      });
    };
    next();
  }

  /** Starts the process now (this thread waits until it has exec'd): returns it, or throws. */
  function start(request) {
    let outcome = null;
    attempt(request, false, (err, started) => {
      outcome = { err, started };
    });
    if (outcome.err !== null) throw outcome.err;
    return outcome.started;
  }

  /**
   * Starts the process from a worker thread: this thread goes on while the
   * child execs (however long a busy machine makes that), and `done(error,
   * started)` is called on a later turn. Throws what is wrong with the request.
   */
  function startAsync(request, done) {
    attempt(request, true, done);
  }

  return { start, startAsync, why: null };
}

module.exports = { nodeStart, loadPosixSpawn };
