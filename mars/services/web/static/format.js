// Formatting of bytes, durations, times and cores for display.

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
const DASH = "–";

function missing(value) {
  return value === null || value === undefined || Number.isNaN(value);
}

/** 1288490189 -> "1.2 GiB"; 512 -> "512 B"; null -> "–". */
export function bytes(value) {
  if (missing(value)) return DASH;
  let n = Number(value);
  let unit = 0;
  while (Math.abs(n) >= 1024 && unit < UNITS.length - 1) {
    n /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${Math.round(n)} B` : `${n.toFixed(1)} ${UNITS[unit]}`;
}

/** Seconds -> "0.47 s", "12.3 s", "3 min 20 s", "2 h 5 min", "3 d 4 h". */
export function duration(seconds) {
  if (missing(seconds)) return DASH;
  const s = Math.max(0, Number(seconds));
  if (s < 1) return `${s.toFixed(2)} s`;
  if (s < 60) return `${s.toFixed(1)} s`;
  const whole = Math.floor(s);
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${whole % 60} s`;
  if (whole < 86400) return `${Math.floor(whole / 3600)} h ${Math.floor((whole % 3600) / 60)} min`;
  return `${Math.floor(whole / 86400)} d ${Math.floor((whole % 86400) / 3600)} h`;
}

/** How long ago `then` was, seen at `now` (both unix seconds): "2 s ago", "5 min ago". */
export function ago(then, now) {
  if (missing(then)) return DASH;
  const s = Math.max(0, Math.floor(now - then));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 172800) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

function pad(n, width = 2) {
  return String(n).padStart(width, "0");
}

/** Unix seconds -> "14:03:21" today, else "2025-11-22 14:03". */
export function clock(unix, nowUnix) {
  if (missing(unix)) return DASH;
  const d = new Date(unix * 1000);
  const today = new Date((nowUnix || Date.now() / 1000) * 1000);
  const hms = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  if (d.toDateString() === today.toDateString()) return hms;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${hms.slice(0, 5)}`;
}

/** Unix seconds -> "14:03:21.042", for log lines. */
export function logTime(unix) {
  if (missing(unix)) return DASH;
  const d = new Date(unix * 1000);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** Unix seconds -> full local date and time, for hover titles. */
export function fullTime(unix) {
  if (missing(unix)) return "";
  return new Date(unix * 1000).toString();
}

/** 0.4213 -> "42%" (floored, so 99.6% does not read "100%" before the end). */
export function percent(fraction) {
  if (missing(fraction)) return DASH;
  const p = Math.max(0, Math.min(1, Number(fraction)));
  return `${Math.floor(p * 100 + 1e-9)}%`;
}

/** CPU cores busy of the cores given: "1.25 / 3"; "– / 3" before the first report. */
export function cores(busy, total) {
  const of = missing(total) ? DASH : String(total);
  if (missing(busy)) return DASH;
  return `${Number(busy).toFixed(2)} / ${of}`;
}

/** Memory used of a limit: "1.2 GiB / 16.0 GiB". */
export function usedOf(used, limit) {
  if (missing(used)) return DASH;
  return `${bytes(used)} / ${bytes(limit)}`;
}

/** "1 task", "3 tasks". */
export function plural(n, word, many) {
  return `${n} ${n === 1 ? word : many || `${word}s`}`;
}
