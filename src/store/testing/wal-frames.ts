/** One frame of a SQLite WAL file: a page image and, on the last frame of a transaction, the commit mark. */
export interface WalFrame {
  /** Where the frame's 24-byte header starts in the file. */
  readonly offset: number;
  readonly pageNumber: number;
  /** The database size in pages after the transaction, on its commit frame; 0 on the others. */
  readonly commitSize: number;
}

export interface WalContents {
  readonly pageSize: number;
  /** The frames SQLite would read back: those of the current generation whose checksums hold. */
  readonly frames: WalFrame[];
}

const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;
const MAGIC_LITTLE_ENDIAN = 0x377f0682;
const MAGIC_BIG_ENDIAN = 0x377f0683;

/** SQLite's WAL checksum: two running 32-bit sums over pairs of words, continued from `seed`. */
function checksum(bytes: Buffer, bigEndian: boolean, seed: readonly [number, number]): [number, number] {
  let [first, second] = seed;
  for (let at = 0; at < bytes.length; at += 8) {
    const wordA = bigEndian ? bytes.readUInt32BE(at) : bytes.readUInt32LE(at);
    const wordB = bigEndian ? bytes.readUInt32BE(at + 4) : bytes.readUInt32LE(at + 4);
    first = (first + wordA + second) >>> 0;
    second = (second + wordB + first) >>> 0;
  }
  return [first, second];
}

/**
 * Reads a WAL file the way SQLite's recovery does (https://sqlite.org/fileformat2.html#walformat):
 * the header, then frames for as long as each carries the header's salts and a checksum that
 * continues the chain. Frames after the first one that fails are not part of the log. For the
 * tests that cut a WAL at a chosen place; throws when `wal` has no valid header.
 */
export function readWalFrames(wal: Buffer): WalContents {
  if (wal.length < WAL_HEADER_BYTES) throw new Error(`A WAL file needs a ${WAL_HEADER_BYTES}-byte header; this one has ${wal.length} bytes.`);
  const magic = wal.readUInt32BE(0);
  if (magic !== MAGIC_LITTLE_ENDIAN && magic !== MAGIC_BIG_ENDIAN) throw new Error(`Not a WAL file: magic ${magic.toString(16)}.`);
  const bigEndian = magic === MAGIC_BIG_ENDIAN;
  const pageSize = wal.readUInt32BE(8);
  const salts = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
  let sums = checksum(wal.subarray(0, 24), bigEndian, [0, 0]);
  if (sums[0] !== wal.readUInt32BE(24) || sums[1] !== wal.readUInt32BE(28)) throw new Error('The WAL header checksum does not hold.');
  const frames: WalFrame[] = [];
  const frameBytes = FRAME_HEADER_BYTES + pageSize;
  for (let offset = WAL_HEADER_BYTES; offset + frameBytes <= wal.length; offset += frameBytes) {
    if (wal.readUInt32BE(offset + 8) !== salts[0] || wal.readUInt32BE(offset + 12) !== salts[1]) break;
    sums = checksum(wal.subarray(offset, offset + 8), bigEndian, sums);
    sums = checksum(wal.subarray(offset + FRAME_HEADER_BYTES, offset + frameBytes), bigEndian, sums);
    if (sums[0] !== wal.readUInt32BE(offset + 16) || sums[1] !== wal.readUInt32BE(offset + 20)) break;
    frames.push({ offset, pageNumber: wal.readUInt32BE(offset), commitSize: wal.readUInt32BE(offset + 4) });
  }
  return { pageSize, frames };
}
