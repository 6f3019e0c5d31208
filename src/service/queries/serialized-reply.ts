/**
 * A reply serialized ahead of time: the UTF-8 of a JSON object, closed with the revision (which
 * comes last in every reply). The endpoint sends the bytes as they are, so a cached lookup is
 * neither serialized nor encoded again, and sending it allocates nothing.
 *
 * A new revision is written over the old one in the same memory whenever its tail has the same
 * length, so a reply's bytes are allocated once and live as long as the cache keeps the reply.
 * Two designs before this one cost the garbage collector dearly (docs/performance.md, eighth
 * round). A fresh buffer per send used up the old generation's headroom, which counts memory
 * outside the V8 heap, between two scavenges: a full mark-compact after every scavenge. New
 * bytes at each new revision, kept until the next, made thousands of buffers that lived long
 * enough to be promoted and then died, which only full mark-compacts free: at 100,000 agent
 * types, with the revision moving every 1.7 s, twice the CPU per lookup.
 *
 * Why writing over bytes already handed out is sound:
 *  - The NATS client keeps a payload only until its next flush, which copies it into one
 *    outgoing buffer (nats-core's DataBuffer.pack) before anything reaches the socket. A reply
 *    still queued when its revision is rewritten goes out with the newer revision
 *    (test/integration/nats-payload-copy.test.ts holds the pinned client to this).
 *  - That revision is true of it. The lookup cache drops a reply at the first change that could
 *    alter it (lookup-cache.ts), and a dropped reply is never closed again; so a reply closed
 *    with revision R reflects the store at R as well as at every revision it was closed with
 *    before.
 *  - A tail of another length is never written in place: a shorter one would leave stray
 *    digits after the brace, a longer one would be cut by the length already handed out. It
 *    gets new memory, once per added digit (or after a reload that went back to revision 0).
 */
export class SerializedReply {
  /** The open object, then room for the longest tail. */
  private memory: Buffer;
  /** The reply as last closed: `memory` up to the end of `,"revision":N}`. */
  private bytes: Buffer;
  private revision = -1;
  private readonly openLength: number;

  /** `open` is the JSON of an object without its closing brace. */
  constructor(open: string) {
    this.openLength = Buffer.byteLength(open);
    // Outside Node's shared pool: the cache keeps it for long, and a pooled slice would hold a whole slab.
    this.memory = Buffer.allocUnsafeSlow(this.openLength + REVISION_TAIL_MAX);
    this.memory.write(open, 0);
    this.bytes = this.memory.subarray(0, 0);
  }

  /** Bytes held (for the cache's budget; the revision's tail is counted as its longest). */
  get length(): number {
    return this.memory.length;
  }

  /** The reply with `revision`: the open object, then `,"revision":N}`. */
  close(revision: number): Uint8Array {
    if (revision === this.revision) return this.bytes;
    const tail = `,"revision":${revision}}`;
    if (this.revision !== -1 && tail.length !== this.bytes.length - this.openLength) {
      const memory = Buffer.allocUnsafeSlow(this.memory.length);
      this.memory.copy(memory, 0, 0, this.openLength);
      this.memory = memory;
    }
    this.memory.write(tail, this.openLength, "latin1");
    this.bytes = this.memory.subarray(0, this.openLength + tail.length);
    this.revision = revision;
    return this.bytes;
  }
}

/** `,"revision":` plus 16 digits and the brace. */
const REVISION_TAIL_MAX = 29;
