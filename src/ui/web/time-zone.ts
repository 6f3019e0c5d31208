/**
 * Absolute times in local time or UTC, as the operator chose with the header's toggle; the
 * choice is remembered in localStorage, so a page opened later shows times the same way.
 * Every absolute time on the page is a <time class="abs"> (dom.ts), redrawn in place when the
 * choice changes.
 */
const KEY = "agent-registry.ui.times";
export type Zone = "local" | "utc";

let zone: Zone = readZone();

function readZone(): Zone {
  try {
    return localStorage.getItem(KEY) === "utc" ? "utc" : "local";
  } catch {
    return "local"; // storage refused (a private window's policy): local time, not remembered
  }
}

export function currentZone(): Zone {
  return zone;
}

const pad = (n: number): string => String(n).padStart(2, "0");

/** "2026-11-27 20:51:03" in the chosen zone, with " UTC" after it when that is the zone; "" for no time. */
export function absolute(iso: string | null | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (!Number.isFinite(d.getTime())) return "";
  if (zone === "utc") return `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Switches the zone, remembers it, and redraws every absolute time and every time's hover text. */
export function setZone(next: Zone): void {
  zone = next;
  try {
    localStorage.setItem(KEY, next);
  } catch {
    // not remembered; the page still switches
  }
  for (const el of document.querySelectorAll<HTMLTimeElement>("time[datetime]")) {
    el.title = absolute(el.dateTime);
    if (el.classList.contains("abs")) el.textContent = absolute(el.dateTime);
  }
}

/** The header's toggle: a button whose label says which zone is shown; pressed means UTC. */
export function mountZoneToggle(button: HTMLButtonElement): void {
  const show = (): void => {
    button.textContent = zone === "utc" ? "Times: UTC" : "Times: local";
    button.setAttribute("aria-pressed", String(zone === "utc"));
  };
  button.addEventListener("click", () => {
    setZone(zone === "utc" ? "local" : "utc");
    show();
  });
  show();
}
