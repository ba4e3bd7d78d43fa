// A small fetch wrapper: session cookie authentication, CSRF header on writes, and the API's one error shape
// ({"error": {"code", "message", "details"}}) turned into ApiError.

import type { Page } from "./types";

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;

  constructor(status: number, code: string, message: string, details: unknown = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
  }

  /** The session is gone (or never was): the user must sign in again. */
  get needsSignIn(): boolean {
    return this.status === 401 || this.code === "not_authenticated" || this.code === "authentication_failed";
  }
}

export function readCookie(name: string): string {
  const prefix = `${name}=`;
  for (const part of document.cookie.split(";")) {
    const item = part.trim();
    if (item.startsWith(prefix)) return decodeURIComponent(item.slice(prefix.length));
  }
  return "";
}

export function signInUrl(): string {
  const next = window.location.pathname + window.location.search;
  return `/accounts/login/?next=${encodeURIComponent(next)}`;
}

async function toError(res: Response): Promise<ApiError> {
  let body: unknown = null;
  const type = res.headers.get("content-type") ?? "";
  if (type.includes("json")) {
    try {
      body = await res.json();
    } catch {
      body = null;
    }
  }
  const err = (body as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
  if (err && typeof err === "object") {
    return new ApiError(res.status, err.code ?? "error", err.message ?? res.statusText, err.details ?? null);
  }
  if (res.status === 404) return new ApiError(404, "not_found", "Not found.");
  if (res.status === 403) return new ApiError(403, "forbidden", "You do not have permission to do this.");
  if (res.redirected && res.url.includes("/accounts/login/")) {
    return new ApiError(401, "not_authenticated", "Your session has ended: sign in again.");
  }
  return new ApiError(res.status, "http_error", `The server answered ${res.status} ${res.statusText}`.trim());
}

export interface RequestOptions {
  signal?: AbortSignal;
}

async function request<T>(method: string, url: string, body?: unknown, opts: RequestOptions = {}): Promise<T> {
  return (await requestWithStatus<T>(method, url, body, opts)).data;
}

/** The answer's status too (e.g. 201 created against 200 already stored). */
export async function requestWithStatus<T>(
  method: string,
  url: string,
  body?: unknown,
  opts: RequestOptions = {},
): Promise<{ status: number; data: T }> {
  const headers: Record<string, string> = { Accept: "application/json" };
  let payload: BodyInit | undefined;
  if (body instanceof FormData) {
    payload = body;
  } else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  if (method !== "GET" && method !== "HEAD") headers["X-CSRFToken"] = readCookie("csrftoken");
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body: payload, credentials: "same-origin", signal: opts.signal });
  } catch (e) {
    if ((e as Error).name === "AbortError") throw e;
    throw new ApiError(0, "network", "The server could not be reached. Check your connection and try again.");
  }
  if (!res.ok) throw await toError(res);
  if (res.status === 204) return { status: 204, data: undefined as T };
  const type = res.headers.get("content-type") ?? "";
  if (!type.includes("json")) {
    if (res.url.includes("/accounts/login/")) {
      throw new ApiError(401, "not_authenticated", "Your session has ended: sign in again.");
    }
    return { status: res.status, data: (await res.text()) as T };
  }
  return { status: res.status, data: (await res.json()) as T };
}

export const api = {
  get: <T>(url: string, opts?: RequestOptions) => request<T>("GET", url, undefined, opts),
  post: <T>(url: string, body?: unknown, opts?: RequestOptions) => request<T>("POST", url, body ?? {}, opts),
  patch: <T>(url: string, body: unknown, opts?: RequestOptions) => request<T>("PATCH", url, body, opts),
  put: <T>(url: string, body: unknown, opts?: RequestOptions) => request<T>("PUT", url, body, opts),
  del: <T>(url: string, opts?: RequestOptions) => request<T>("DELETE", url, undefined, opts),
};

/** Every item of a paginated listing, fetching the remaining pages in parallel (a few at a time). */
export async function fetchAll<T>(url: string, opts: RequestOptions & { pageSize?: number } = {}): Promise<T[]> {
  const size = opts.pageSize ?? 1000;
  const sep = url.includes("?") ? "&" : "?";
  const first = await api.get<Page<T>>(`${url}${sep}page_size=${size}&page=1`, opts);
  const pages = Math.ceil(first.count / size);
  const out: T[] = [...first.results];
  const rest: number[] = [];
  for (let p = 2; p <= pages; p++) rest.push(p);
  const parallel = 4;
  for (let i = 0; i < rest.length; i += parallel) {
    const chunk = await Promise.all(
      rest.slice(i, i + parallel).map((p) => api.get<Page<T>>(`${url}${sep}page_size=${size}&page=${p}`, opts)),
    );
    for (const page of chunk) out.push(...page.results);
  }
  return out;
}

export function qs(params: Record<string, string | number | boolean | null | undefined | string[]>): string {
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === null || v === undefined || v === "") continue;
    if (Array.isArray(v)) v.forEach((item) => sp.append(k, item));
    else sp.set(k, String(v));
  }
  const s = sp.toString();
  return s ? `?${s}` : "";
}
