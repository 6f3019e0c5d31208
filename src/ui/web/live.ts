/** The header's indicator of the event stream: live, or reconnecting. */
export function setLive(open: boolean): void {
  const el = document.getElementById("live");
  if (!el) return;
  el.textContent = open ? "live" : "reconnecting…";
  el.className = open ? "live on" : "live off";
}
