/** Writing a state file so that a crash leaves either the old or the new content, never a torn one. */
import fs from 'node:fs';
import path from 'node:path';

/** What a write cut short by a crash leaves next to its target. */
const LEFTOVER = /\.tmp-\d+$/;

/** Removes the temp files of writes a crashed process never finished in `dir` (they would only take room). */
export function removeLeftovers(dir: string): void {
  for (const name of fs.readdirSync(dir)) if (LEFTOVER.test(name)) fs.rmSync(path.join(dir, name), { force: true });
}

/** Temp file, fsync, rename over the target, fsync of the directory. */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  const handle = await fs.promises.open(tmp, 'w', 0o600);
  try {
    try {
      await handle.writeFile(data, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (err) {
    // A half-written temp file would keep the space a full disk needs back.
    await fs.promises.rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
  await fs.promises.rename(tmp, file);
  await syncDir(path.dirname(file));
}

export function writeFileAtomicSync(file: string, data: string | Uint8Array): void {
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeFileSync(fd, data, 'utf8');
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  syncDirSync(path.dirname(file));
}

export async function syncDir(dir: string): Promise<void> {
  const handle = await fs.promises.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function syncDirSync(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
