/**
 * A reply serialized ahead of time: the UTF-8 of a JSON object closed with the revision (which
 * comes last in every reply). The endpoint sends the bytes as they are, so a cached lookup is
 * neither serialized nor encoded again, and while the revision stands it allocates nothing.
 */
export class SerializedReply {
  /** The reply as last closed: the open object, then `,"revision":N}`. */
  private bytes: Buffer;
  private revision = -1;
  private readonly openLength: number;

  /**
   * `open` is the JSON of an object without its closing brace. It is written with room for the
   * longest tail, so the first close, which every reply has, allocates nothing more.
   */
  constructor(open: string) {
    this.openLength = Buffer.byteLength(open);
    this.bytes = Buffer.allocUnsafeSlow(this.openLength + REVISION_TAIL_MAX);
    this.bytes.write(open, 0);
  }

  /** Bytes held (for the cache's budget; the revision's tail is counted as its longest). */
  get length(): number {
    return this.openLength + REVISION_TAIL_MAX;
  }

  /**
   * The reply with `revision`. The same bytes again while the revision stands: building a
   * 2.6 KB Buffer per lookup made V8 count an external allocation of that size every time, and
   * at 25,000 lookups/s that pressure alone started a major GC several times a second
   * (docs/performance.md). A new revision costs one allocation, kept out of Node's shared
   * pool (allocUnsafeSlow) because the cache holds it for long.
   */
  close(revision: number): Uint8Array {
    if (revision === this.revision) return this.bytes;
    const tail = `,"revision":${revision}}`;
    if (this.revision === -1) {
      // Nothing was sent yet: the tail goes into the room left for it.
      this.bytes.write(tail, this.openLength, "latin1");
      this.bytes = this.bytes.subarray(0, this.openLength + tail.length);
    } else {
      const out = Buffer.allocUnsafeSlow(this.openLength + tail.length);
      out.set(this.bytes.subarray(0, this.openLength), 0);
      out.write(tail, this.openLength, "latin1");
      this.bytes = out;
    }
    this.revision = revision;
    return this.bytes;
  }
}

/** `,"revision":` plus 16 digits and the brace. */
const REVISION_TAIL_MAX = 29;
