import { Zip, ZipPassThrough } from 'fflate';
import type { BlobStore } from './blob-store';
import type { BundleEntry } from './signed-urls';

const UNIX = 3;
/** External attributes: the Unix mode in the upper 16 bits. */
const REGULAR_FILE_0644 = (0o100644 << 16) >>> 0;

/**
 * The blobs as one ZIP archive, made while it is read: entries are stored, not compressed (PDFs compress little,
 * and deflating on the event loop would hold it), each blob read as a stream, one after the other, every chunk
 * passed on as it comes. Only the chunk in hand is in memory, never a whole blob; pulled (Readable.from), so a slow
 * reader slows the reading of the blobs. fflate writes each entry's CRC-32 and sizes after its data (a data
 * descriptor, as a streamed ZIP does) and in the central directory; names are UTF-8 (flagged as such).
 */
export async function* zipOfBlobs(blobs: BlobStore, entries: BundleEntry[], mtime = new Date()): AsyncGenerator<Uint8Array> {
  const ready: Uint8Array[] = [];
  let failure: Error | null = null;
  const zip = new Zip((error, chunk) => {
    if (error) failure = error;
    else ready.push(chunk);
  });
  // fflate hands over what is ready synchronously, within push/end: each step's output is taken right after it.
  const take = function* (): Generator<Uint8Array> {
    if (failure) throw failure;
    yield* ready.splice(0);
  };
  for (const entry of entries) {
    const file = new ZipPassThrough(entry.filename);
    file.mtime = mtime;
    // Made on Unix, a plain file readable by all (rw-r--r--): Info-ZIP's unzip reads the names of an archive made
    // on MS-DOS (fflate's default) as code page 437, whatever their UTF-8 flag says.
    file.os = UNIX;
    file.attrs = REGULAR_FILE_0644;
    zip.add(file);
    for await (const chunk of await blobs.getStream(entry.key)) {
      file.push(chunk as Uint8Array);
      yield* take();
    }
    file.push(new Uint8Array(0), true);
    yield* take();
  }
  zip.end();
  yield* take();
}
