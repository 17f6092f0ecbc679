import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import net from "node:net";

// PGlite does not lock its folder, and two processes on one folder would
// corrupt it: the first server to open a folder holds it until it exits.
//
// On Linux the lock is held by the kernel: a listening Unix socket in the
// abstract namespace, named for the folder's device and inode (so every path
// to one folder, symlinks included, names the same lock). Binding the name is
// atomic, so two servers starting at once cannot both win, and the kernel
// frees it the moment its owner's file descriptors close, which happens when
// the process exits, however it exits: a `kill -9`ed server that is still a
// zombie (not yet reaped by its parent, or never, in a container whose init
// does not reap) no longer holds it, and a recycled pid means nothing. A pid
// file was tried first and could not tell either case from a live owner.
//
// `sessionstore.lock` in the folder names the owner's pid, for the message
// a refused second server prints. Elsewhere (macOS, Windows) that file is the
// lock itself, taken over when its process is gone.
//
// The lock holds on one host, within one network namespace: containers that
// share the folder but not the network namespace do not see each other's
// lock; run PostgreSQL for several servers.

const LOCK_FILE = "sessionstore.lock";

/** Folders this process holds: a second open in the same process is refused too. */
const lockedHere = new Set<string>();

/** Holds `dataDir` for this process; resolves to the function that lets it go. */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  if (lockedHere.has(dataDir)) throw inUse(dataDir, `process ${process.pid} (this one)`);
  lockedHere.add(dataDir);
  try {
    const release = process.platform === "linux" ? await holdAbstractSocket(dataDir) : holdPidFile(dataDir);
    return async () => {
      await release();
      lockedHere.delete(dataDir);
    };
  } catch (err) {
    lockedHere.delete(dataDir);
    throw err;
  }
}

async function holdAbstractSocket(dataDir: string): Promise<() => Promise<void>> {
  const { dev, ino } = statSync(dataDir);
  // A leading NUL puts the name in the abstract namespace: no file, nothing left behind.
  const name = `\0sessionstore-embedded/${dev}:${ino}`;
  // Nobody is meant to connect; anyone who does is let go at once.
  const socket = net.createServer((conn) => conn.destroy());
  await new Promise<void>((resolve, reject) => {
    socket.once("error", (err: NodeJS.ErrnoException) => {
      reject(err.code === "EADDRINUSE" ? inUse(dataDir, owner(dataDir)) : err);
    });
    socket.listen(name, () => resolve());
  });
  // The lock must not keep the process alive by itself.
  socket.unref();
  const path = `${dataDir}/${LOCK_FILE}`;
  writeFileSync(path, String(process.pid));
  return () =>
    new Promise<void>((resolve) => {
      removeQuietly(path);
      // Resolves once the name is free again, so a reopen right after succeeds.
      socket.close(() => resolve());
    });
}

/** The pid file as the lock itself, where there is no abstract namespace. */
function holdPidFile(dataDir: string): () => Promise<void> {
  const path = `${dataDir}/${LOCK_FILE}`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return async () => removeQuietly(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const pid = readPid(path);
      if (pid !== undefined && pid !== process.pid && isAlive(pid)) throw inUse(dataDir, `process ${pid}`);
      // Stale: its process is gone (or its pid is now ours, which only a
      // process that died can have left).
      removeQuietly(path);
    }
  }
  throw new Error(`could not lock ${path}`);
}

function inUse(dataDir: string, who: string): Error {
  return new Error(
    `the embedded store at ${dataDir} is in use by ${who}; use another SESSIONSTORE_DATA_DIR, or PostgreSQL for several servers`,
  );
}

/** Who holds the folder, as far as its pid file says. */
function owner(dataDir: string): string {
  const pid = readPid(`${dataDir}/${LOCK_FILE}`);
  return pid === undefined ? "another process" : `process ${pid}`;
}

function readPid(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}
