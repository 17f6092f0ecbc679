import type { Readable } from "node:stream";

/** One line of the server's JSON log; a line that is not JSON comes as `raw`. */
export interface LogLine {
  msg?: string;
  raw?: string;
  [field: string]: unknown;
}

/** Calls `each` with every complete line `stream` writes, parsed. */
export function onLogLines(stream: Readable | null | undefined, each: (line: LogLine) => void): void {
  let partial = "";
  stream?.on("data", (chunk: Buffer) => {
    partial += chunk.toString();
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    for (const text of lines) {
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { raw: text };
      }
      each(line);
    }
  });
}
