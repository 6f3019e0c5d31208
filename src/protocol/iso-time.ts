/**
 * A time in milliseconds as ISO 8601 text, as `new Date(ms).toISOString()`, with the last
 * answer kept: a heartbeat's reply and its event each carry the time, and at tens of thousands
 * of heartbeats a second many fall in the same millisecond (formatting was the largest part of
 * answering a heartbeat from memory in issue 20's profile).
 */
let lastMs = Number.NaN;
let lastText = "";

export function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
}
