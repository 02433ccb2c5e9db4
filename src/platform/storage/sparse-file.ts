import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * A file as one Buffer of its length, read from disk only where `fill` asks. The Buffer is allocated zeroed, which
 * the kernel backs lazily: the pages never filled cost no memory, so checking the structure of a 50 MB upload holds
 * its few regions, not 50 MB. Synchronous reads: it is meant for a worker thread, reading a spooled upload.
 */
export class SparseFile {
  readonly bytes: Buffer;
  /** Filled ranges [start, end), sorted and disjoint. */
  private readonly filled: [number, number][] = [];

  private constructor(
    private readonly fd: number,
    size: number,
  ) {
    this.bytes = Buffer.alloc(size);
  }

  /** Opens `path`, runs `use` on it, and closes it. */
  static use<T>(path: string, use: (file: SparseFile) => T): T {
    const fd = openSync(path, 'r');
    try {
      return use(new SparseFile(fd, fstatSync(fd).size));
    } finally {
      closeSync(fd);
    }
  }

  /** Makes bytes [start, end) (clamped to the file) hold the file's bytes. */
  fill = (start: number, end: number): void => {
    let from = Math.max(0, start);
    const to = Math.min(this.bytes.length, end);
    const gaps: [number, number][] = [];
    for (const [s, e] of this.filled) {
      if (from >= to) break;
      if (e <= from || s >= to) continue;
      if (s > from) gaps.push([from, s]);
      from = Math.max(from, e);
    }
    if (from < to) gaps.push([from, to]);
    for (const [s, e] of gaps) this.read(s, e);
  };

  private read(start: number, end: number): void {
    for (let at = start; at < end;) {
      const got = readSync(this.fd, this.bytes, at, end - at, at);
      if (got === 0) break;
      at += got;
    }
    this.filled.push([start, end]);
    this.filled.sort((a, b) => a[0] - b[0]);
  }
}
