import type { SnapshotState } from "../lib/uploads";
import { fraction, progressText } from "../lib/uploads";
import { ProgressBar } from "./Bars";

/** A large upload being read on the server: how much of it, and how many objects so far. */
export function UploadProgressView({ snapshot, filename }: { snapshot: SnapshotState; filename?: string }) {
  const reading = snapshot.status === "parsing";
  return (
    <div className="upload-progress" role="status" aria-live="polite" data-testid="upload-progress" style={{ marginTop: 8 }}>
      <div className="small">
        <span className="spinner" aria-hidden="true" />{" "}
        {reading ? "Reading" : "Stored, queued for reading:"} <strong>{filename || snapshot.name}</strong>
        {" — "}
        {progressText(snapshot)}
      </div>
      <div style={{ marginTop: 4 }}>
        <ProgressBar value={fraction(snapshot.progress)} label="upload read" />
      </div>
    </div>
  );
}
