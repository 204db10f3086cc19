/**
 * Reads a SQLite write-ahead log the way SQLite recovers it, to find a log SQLite would silently
 * drop: a header that is not a WAL header (or fails its checksum), frames of the current log that
 * break the checksum chain while committed frames follow them, or frames that belong to no log
 * generation. SQLite would open such a file as an older (or empty) database; the store refuses it
 * instead. A torn tail (an uncommitted write cut by a crash) and frames of an earlier generation
 * left behind by a checkpoint are normal and pass.
 */

const MAGIC_LITTLE_ENDIAN = 0x377f0682;
const MAGIC_BIG_ENDIAN = 0x377f0683;
const WAL_VERSION = 3007000;
const HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;

/** Why a log would be dropped, or null when SQLite recovers it as written. */
export function walProblem(wal: Buffer): string | null {
  if (wal.length < HEADER_BYTES) return null;
  const magic = wal.readUInt32BE(0);
  if (magic !== MAGIC_LITTLE_ENDIAN && magic !== MAGIC_BIG_ENDIAN) return 'its header is not a write-ahead log header';
  const bigEndian = magic === MAGIC_BIG_ENDIAN;
  if (wal.readUInt32BE(4) !== WAL_VERSION) return 'its header names an unknown log format';
  const pageSize = wal.readUInt32BE(8);
  if (pageSize < 512 || pageSize > 65_536 || (pageSize & (pageSize - 1)) !== 0)
    return 'its header names an invalid page size';
  const salts = [wal.readUInt32BE(16), wal.readUInt32BE(20)] as const;
  let sum = checksum(wal, 0, 24, [0, 0], bigEndian);
  if (sum[0] !== wal.readUInt32BE(24) || sum[1] !== wal.readUInt32BE(28)) return 'its header fails its checksum';
  const frameBytes = FRAME_HEADER_BYTES + pageSize;
  const frames = Math.floor((wal.length - HEADER_BYTES) / frameBytes);
  const at = (index: number) => HEADER_BYTES + index * frameBytes;
  const current = (offset: number) =>
    wal.readUInt32BE(offset + 8) === salts[0] && wal.readUInt32BE(offset + 12) === salts[1];
  let index = 0;
  for (; index < frames; index++) {
    const offset = at(index);
    if (!current(offset)) break;
    sum = checksum(wal, offset, 8, sum, bigEndian);
    sum = checksum(wal, offset + FRAME_HEADER_BYTES, pageSize, sum, bigEndian);
    if (sum[0] !== wal.readUInt32BE(offset + 16) || sum[1] !== wal.readUInt32BE(offset + 20)) break;
  }
  // SQLite stops at the first frame that fails: committed frames of this log after it would be lost.
  for (let later = index + 1; later < frames; later++) {
    const offset = at(later);
    if (current(offset) && wal.readUInt32BE(offset + 4) !== 0)
      return `frame ${index + 1} fails its checksum, and committed frames follow it`;
  }
  // The first frame not of this log: an earlier generation's (salt-1 one less) left behind by a
  // checkpoint, or garbage.
  if (index < frames && index === 0 && !current(at(0))) {
    const previous = (salts[0] - 1) >>> 0;
    if (wal.readUInt32BE(at(0) + 8) !== previous) return 'its first frame belongs to no generation of this log';
  }
  return null;
}

/** SQLite's WAL checksum over `length` bytes (a multiple of 8) from `offset`, continuing `sum`. */
function checksum(
  data: Buffer,
  offset: number,
  length: number,
  sum: readonly [number, number],
  bigEndian: boolean,
): [number, number] {
  let s0 = sum[0];
  let s1 = sum[1];
  for (let i = offset; i < offset + length; i += 8) {
    const x0 = bigEndian ? data.readUInt32BE(i) : data.readUInt32LE(i);
    const x1 = bigEndian ? data.readUInt32BE(i + 4) : data.readUInt32LE(i + 4);
    s0 = (s0 + x0 + s1) >>> 0;
    s1 = (s1 + x1 + s0) >>> 0;
  }
  return [s0, s1];
}
