/**
 * Reads a file and tells when its content changes. It watches the file's directory, not the
 * file: editors and Kubernetes ConfigMap mounts replace a file by rename or symlink swap, which
 * a watch on the old inode never sees. A slow poll of the content backs fs.watch up (it is
 * not reliable on every filesystem), and changes are debounced so a half-written file is read
 * once it has settled.
 */
import { readFile } from "node:fs/promises";
import { watch, type FSWatcher } from "node:fs";
import { basename, dirname, resolve } from "node:path";

export type WatchedFile = { close(): void };

export async function readText(path: string): Promise<string> {
  return readFile(path, "utf8");
}

export function watchFile(
  path: string,
  onChange: (text: string | null, error: Error | null) => void,
  opts: { debounceMs?: number; pollMs?: number; initial?: string } = {},
): WatchedFile {
  const full = resolve(path);
  const name = basename(full);
  let last: string | null = opts.initial ?? null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  const check = async (): Promise<void> => {
    if (closed) return;
    try {
      const text = await readFile(full, "utf8");
      if (text !== last) {
        last = text;
        onChange(text, null);
      }
    } catch (e) {
      const marker = `error:${(e as Error).message}`;
      if (marker !== last) {
        last = marker;
        onChange(null, e as Error);
      }
    }
  };
  const schedule = (): void => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void check(), opts.debounceMs ?? 200);
    timer.unref();
  };

  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(dirname(full), (_event, file) => {
      if (file === null || file === name || file.startsWith("..")) schedule();
    });
    watcher.on("error", () => undefined);
    watcher.unref();
  } catch {
    watcher = null; // the poll below still notices changes
  }
  const poll = setInterval(() => void check(), opts.pollMs ?? 2000);
  poll.unref();

  return {
    close() {
      closed = true;
      watcher?.close();
      clearInterval(poll);
      if (timer) clearTimeout(timer);
    },
  };
}
