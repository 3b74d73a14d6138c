// The only way the pages talk to the cluster: the JSON REST API (docs/web-api.md).
//
// The cluster's token arrives once as ?token=... in the page's URL; it is kept in
// sessionStorage (this tab only) and sent as a Bearer header on every call.
// Opening that URL also set an HttpOnly cookie, so the dashboard's other tabs can
// read (GET) without it; changing anything (POST) always needs the header.
// Failures become ApiError with the API's own message, for the page to show.

const TOKEN_KEY = "mars-token";
const NEEDS_TOKEN = "This cluster needs its token: open the dashboard at the URL that mars-supervisor printed " +
  "when it started (http://host:port/?token=...).";
let token = null;
// server clock minus browser clock, in seconds: "N s ago" is measured on the server's clock
let skew = 0;

/** An API failure: `type` and `message` from the API's error body, `status` 0 when unreachable. */
export class ApiError extends Error {
  constructor(type, message, status, traceback) {
    super(message);
    this.name = "ApiError";
    this.type = type;
    this.status = status;
    this.traceback = traceback || "";
  }

  /** Whether the web service could not be reached at all. */
  get unreachable() {
    return this.status === 0;
  }
}

function storage() {
  try {
    return window.sessionStorage; // may throw where storage is disabled
  } catch {
    return null;
  }
}

/** Read ?token= from the page's URL once; later calls reuse the stored one. */
export function initToken() {
  const fromUrl = new URLSearchParams(window.location.search).get("token");
  const store = storage();
  if (fromUrl) {
    token = fromUrl;
    try {
      if (store) store.setItem(TOKEN_KEY, fromUrl);
    } catch {
      /* storage full or disabled: the token still works for this page load */
    }
  } else if (store) {
    token = store.getItem(TOKEN_KEY);
  }
}

/** Now on the server's clock, in unix seconds. */
export function serverNow() {
  return Date.now() / 1000 + skew;
}

/** Record the server's time as reported in a response body (precise). */
export function noteServerTime(unixSeconds) {
  if (typeof unixSeconds === "number" && Number.isFinite(unixSeconds)) skew = unixSeconds - Date.now() / 1000;
}

// The Date header has 1 s resolution: only trust it when the clocks clearly differ.
function noteDateHeader(response) {
  const header = response.headers.get("Date");
  const parsed = header ? Date.parse(header) : NaN;
  if (Number.isNaN(parsed)) return;
  const headerSkew = parsed / 1000 - Date.now() / 1000;
  if (Math.abs(headerSkew - skew) > 2) skew = headerSkew;
}

async function errorOf(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    /* not JSON: a proxy's page, say */
  }
  const err = body && body.error;
  if (err && typeof err.message === "string") {
    return new ApiError(err.type || "Error", err.message, response.status, err.traceback);
  }
  return new ApiError("HTTPError", `${response.status} ${response.statusText || "error"} from ${response.url}`, response.status);
}

/** Call the API; resolves to the parsed JSON body or rejects with ApiError. */
export async function request(method, path, { signal, body } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, { method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    if (e && e.name === "AbortError") throw e;
    throw new ApiError("ConnectionError", `cannot reach the cluster's web service (${e && e.message}); retrying`, 0);
  }
  noteDateHeader(response);
  if (!response.ok) {
    const error = await errorOf(response);
    // a read refused: this tab has neither the token nor the cookie, and only the printed URL gives them
    if (response.status === 401 && method === "GET") error.message = NEEDS_TOKEN;
    throw error;
  }
  try {
    return await response.json();
  } catch (e) {
    throw new ApiError("BadResponse", `${method} ${path} answered with something that is not JSON: ${e.message}`, response.status);
  }
}

/** GET a path under /api. */
export function get(path, signal) {
  return request("GET", path, { signal });
}

/** POST to a path under /api. */
export function post(path, body, signal) {
  return request("POST", path, { signal, body });
}

/** A path segment: ids and addresses are url-encoded ("127.0.0.1:40001" -> "127.0.0.1%3A40001"). */
export function seg(value) {
  return encodeURIComponent(String(value));
}
