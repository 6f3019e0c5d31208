/** A few DOM helpers: elements from data, never from HTML strings (nothing is parsed as markup). */
import { absolute } from "./time-zone.js";

type Attr = string | number | boolean | null | undefined | ((e: Event) => void);
export type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, Attr> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "number" ? String(c) : c);
  }
}

/** Replaces the children of `el`. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** "3 s ago", "2 min ago": how long ago an ISO time was, by the server's clock. */
export function ago(iso: string | null | undefined, now: number): string {
  if (!iso) return "never";
  const ms = now - Date.parse(iso);
  if (!Number.isFinite(ms)) return "?";
  return `${duration(Math.max(0, ms))} ago`;
}

export function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

export function badge(status: string): HTMLElement {
  return h("span", { class: `badge s-${status.replace(/[^a-z_]/g, "")}` }, status);
}

/** How long ago, the absolute time on hover (local or UTC, time-zone.ts). */
export function time(iso: string | null | undefined, now: number): HTMLElement {
  return h("time", { class: "rel", datetime: iso ?? undefined, title: absolute(iso) || undefined }, ago(iso, now));
}

/** The absolute time itself, for a column of its own; "—" for none. */
export function absTime(iso: string | null | undefined): HTMLElement {
  return iso ? h("time", { class: "abs", datetime: iso, title: absolute(iso) }, absolute(iso)) : h("span", { class: "muted" }, "—");
}

/** Brings every relative time under `root` up to date, in place (focus and selection stay). */
export function tickTimes(root: ParentNode, now: number): void {
  for (const el of root.querySelectorAll<HTMLTimeElement>("time.rel[datetime]")) el.textContent = ago(el.dateTime, now);
}
