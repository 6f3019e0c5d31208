/**
 * Store entries packed into one ArrayBuffer, to cross from the worker thread that reads the
 * bucket at start (last-values-worker.ts) to the main thread without a structured clone per
 * entry: the buffer is transferred, and an entry's value is a view into it, not a copy.
 *
 * Per entry: key length (u16) and key (UTF-8), revision (f64), created in ms (f64), operation
 * (u8: 0 PUT, 1 DEL, 2 PURGE), value length (u32) and value. Revisions are stream sequences,
 * exact in an f64 up to 2^53.
 */
import type { StoreEntry } from "../../domain/ports.js";

const OPERATIONS = ["PUT", "DEL", "PURGE"] as const;
const HEAD = 2 + 8 + 8 + 1 + 4;
/** The u16 of a key's length; nats-server's control line (4 KiB by default) refuses far shorter subjects already. */
const MAX_KEY_BYTES = 0xffff;

export class EntryBatchWriter {
  private bytes: Uint8Array;
  private view: DataView;
  private used = 0;
  private entries = 0;
  private readonly encoder = new TextEncoder();

  constructor(private readonly initialBytes = 1 << 20) {
    this.bytes = new Uint8Array(initialBytes);
    this.view = new DataView(this.bytes.buffer);
  }

  get count(): number {
    return this.entries;
  }

  get size(): number {
    return this.used;
  }

  add(key: string, revision: number, created: number, operation: StoreEntry["operation"], value: Uint8Array): void {
    // A UTF-8 key takes at most 3 bytes a UTF-16 unit.
    this.reserve(HEAD + key.length * 3 + value.length);
    const written = this.encoder.encodeInto(key, this.bytes.subarray(this.used + 2)).written;
    if (written > MAX_KEY_BYTES) throw new Error(`a key of ${written} bytes cannot be packed`);
    let at = this.used;
    this.view.setUint16(at, written);
    at += 2 + written;
    this.view.setFloat64(at, revision);
    this.view.setFloat64(at + 8, created);
    this.bytes[at + 16] = OPERATIONS.indexOf(operation);
    this.view.setUint32(at + 17, value.length);
    at += 21;
    this.bytes.set(value, at);
    this.used = at + value.length;
    this.entries++;
  }

  /** The packed entries in a buffer of their own (to transfer), and a fresh start. */
  take(): ArrayBuffer {
    const out = this.bytes.slice(0, this.used).buffer;
    this.used = 0;
    this.entries = 0;
    if (this.bytes.length > this.initialBytes) {
      this.bytes = new Uint8Array(this.initialBytes);
      this.view = new DataView(this.bytes.buffer);
    }
    return out;
  }

  private reserve(extra: number): void {
    if (this.used + extra <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.used + extra));
    grown.set(this.bytes.subarray(0, this.used));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }
}

/** Reads the entries of one packed buffer in order. */
export class EntryBatchReader {
  private readonly bytes: Uint8Array;
  private readonly view: DataView;
  private at = 0;
  private readonly decoder = new TextDecoder();

  constructor(buffer: ArrayBuffer) {
    this.bytes = new Uint8Array(buffer);
    this.view = new DataView(buffer);
  }

  /** The next entry, or null at the end. */
  next(): StoreEntry | null {
    if (this.at >= this.bytes.length) return null;
    let at = this.at;
    const keyBytes = this.view.getUint16(at);
    const key = this.decoder.decode(this.bytes.subarray(at + 2, at + 2 + keyBytes));
    at += 2 + keyBytes;
    const revision = this.view.getFloat64(at);
    const created = this.view.getFloat64(at + 8);
    const operation = OPERATIONS[this.bytes[at + 16]!];
    const valueBytes = this.view.getUint32(at + 17);
    at += 21;
    if (operation === undefined || at + valueBytes > this.bytes.length) throw new Error("a packed entry batch is damaged");
    const value = this.bytes.subarray(at, at + valueBytes);
    this.at = at + valueBytes;
    return { key, revision, operation, value, created };
  }
}
