// Uploads of real size: the server stores them as received and reads them on its worker, answering 202
// with the snapshot "pending". Its state is followed here until it is "ready" or "failed".

import { ApiError, api } from "../api/client";
import type { Snapshot } from "../api/types";
import { formatSize } from "./format";

export type SnapshotStatus = "pending" | "parsing" | "ready" | "failed";

export interface UploadProgress {
  bytesRead: number;
  bytesTotal: number;
  objectsParsed: number;
}

export interface UploadFailure {
  message: string;
  problems: { document: string; object: string; field: string; message: string }[];
}

/** A snapshot with the state of its upload (every snapshot has one; small uploads are ready at once). */
export interface SnapshotState extends Snapshot {
  status?: SnapshotStatus;
  progress?: UploadProgress;
  error?: UploadFailure | null;
  duplicate_of?: string | null;
  upload_name?: string;
}

export function isReading(s: SnapshotState): boolean {
  return s.status === "pending" || s.status === "parsing";
}

/** The fraction of the upload read (0 to 1). */
export function fraction(p: UploadProgress | undefined): number {
  if (!p || !p.bytesTotal) return 0;
  return Math.min(1, p.bytesRead / p.bytesTotal);
}

/** "12.3 MB of 40.1 MB read, 52,300 objects" */
export function progressText(s: SnapshotState): string {
  const p = s.progress;
  if (s.status === "pending" || !p) return "waiting for the worker…";
  return `${formatSize(p.bytesRead)} of ${formatSize(p.bytesTotal)} read, ${p.objectsParsed.toLocaleString()} objects`;
}

/** A failed upload as the error an upload refused in the request raises (its problems listed). */
export function failureError(s: SnapshotState): ApiError {
  const e = s.error ?? { message: "the upload could not be read", problems: [] };
  return new ApiError(400, "invalid_upload", e.message, e.problems.length ? e.problems : null);
}

export const POLL_MS = 500;

/** Follow a snapshot until it is read: ``onState`` with each state seen; resolves with the last one. */
export async function followSnapshot(
  id: string,
  onState: (s: SnapshotState) => void,
  opts: { signal?: AbortSignal; intervalMs?: number } = {},
): Promise<SnapshotState> {
  const interval = opts.intervalMs ?? POLL_MS;
  for (;;) {
    const s = await api.get<SnapshotState>(`/api/v1/snapshots/${id}/`, { signal: opts.signal });
    onState(s);
    if (!isReading(s)) return s;
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, interval);
      opts.signal?.addEventListener("abort", () => {
        clearTimeout(t);
        reject(new DOMException("aborted", "AbortError"));
      });
    });
  }
}
