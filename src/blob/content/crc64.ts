// Azure Storage's CRC64 (x-ms-content-crc64): the reflected polynomial 0x9A6C9329AC4BC9B5, all ones
// in and out (CRC-64/NVME); its wire form is the 8 bytes little-endian, base64
// (https://learn.microsoft.com/rest/api/storageservices/put-block).
//
// Computed "slicing by 8": eight tables let one step consume 8 bytes with 8 lookups, instead of 8
// steps of one lookup each (about 5× faster in JS). The 64-bit state is kept as two 32-bit halves
// so the loop runs on plain numbers (BigInt is ~100× slower).

const crc64Polynomial = 0x9a6c9329ac4bc9b5n;
const mask64 = (1n << 64n) - 1n;
const slices = 8;
/** Table k, entry i: the CRC of byte i followed by k zero bytes; low and high halves. */
const tablesLow = new Uint32Array(256 * slices);
const tablesHigh = new Uint32Array(256 * slices);
for (let index = 0; index < 256; index++) {
  let crc = BigInt(index);
  for (let bit = 0; bit < 8; bit++) crc = crc & 1n ? (crc >> 1n) ^ crc64Polynomial : crc >> 1n;
  tablesLow[index] = Number(crc & 0xffffffffn);
  tablesHigh[index] = Number(crc >> 32n);
}
for (let k = 1; k < slices; k++) {
  for (let index = 0; index < 256; index++) {
    // One more zero byte after table k-1's entry: shift by 8, fold in table 0's entry of the low byte.
    const low = tablesLow[(k - 1) * 256 + index]!;
    const high = tablesHigh[(k - 1) * 256 + index]!;
    const byte = low & 0xff;
    tablesLow[k * 256 + index] = (((low >>> 8) | (high << 24)) ^ tablesLow[byte]!) >>> 0;
    tablesHigh[k * 256 + index] = ((high >>> 8) ^ tablesHigh[byte]!) >>> 0;
  }
}

/** The running CRC64 of bytes fed in order. */
export class Crc64 {
  private low = 0xffffffff;
  private high = 0xffffffff;

  update(bytes: Uint8Array): this {
    let { low, high } = this;
    let at = 0;
    const wholeEnd = bytes.length - (bytes.length % slices);
    const tl = tablesLow;
    const th = tablesHigh;
    for (; at < wholeEnd; at += slices) {
      const l = (low ^ (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24))) >>> 0;
      const h =
        (high ^ (bytes[at + 4]! | (bytes[at + 5]! << 8) | (bytes[at + 6]! << 16) | (bytes[at + 7]! << 24))) >>> 0;
      // Byte j of the 8 (j = 0 lowest) has 7 - j zero bytes after it: table 7 - j.
      const i7 = 7 * 256 + (l & 0xff);
      const i6 = 6 * 256 + ((l >>> 8) & 0xff);
      const i5 = 5 * 256 + ((l >>> 16) & 0xff);
      const i4 = 4 * 256 + (l >>> 24);
      const i3 = 3 * 256 + (h & 0xff);
      const i2 = 2 * 256 + ((h >>> 8) & 0xff);
      const i1 = 256 + ((h >>> 16) & 0xff);
      const i0 = h >>> 24;
      low = (tl[i7]! ^ tl[i6]! ^ tl[i5]! ^ tl[i4]! ^ tl[i3]! ^ tl[i2]! ^ tl[i1]! ^ tl[i0]!) >>> 0;
      high = (th[i7]! ^ th[i6]! ^ th[i5]! ^ th[i4]! ^ th[i3]! ^ th[i2]! ^ th[i1]! ^ th[i0]!) >>> 0;
    }
    for (; at < bytes.length; at++) {
      const index = (low ^ bytes[at]!) & 0xff;
      low = (((low >>> 8) | (high << 24)) ^ tl[index]!) >>> 0;
      high = ((high >>> 8) ^ th[index]!) >>> 0;
    }
    this.low = low;
    this.high = high;
    return this;
  }

  /** The 8 bytes, little-endian. */
  digest(): Buffer {
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64LE(((BigInt(this.high) << 32n) | BigInt(this.low)) ^ mask64);
    return bytes;
  }
}
