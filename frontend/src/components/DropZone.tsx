import { useRef, useState, type DragEvent, type ReactNode } from "react";

export function DropZone({
  onFile,
  disabled,
  accept,
  label,
  title = "Drop a snapshot here",
  hint,
}: {
  onFile: (file: File) => void;
  disabled?: boolean;
  accept?: string;
  label: string;
  /** The bold line (default: a snapshot). */
  title?: string;
  /** The small line under it (default: what a snapshot is). */
  hint?: ReactNode;
}) {
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    if (disabled) return;
    const f = e.dataTransfer.files?.[0];
    if (f) onFile(f);
  };
  return (
    <div
      className={`dropzone${over ? " over" : ""}${disabled ? " disabled" : ""}`}
      role="button"
      tabIndex={disabled ? -1 : 0}
      aria-disabled={disabled}
      aria-label={label}
      onClick={() => !disabled && input.current?.click()}
      onKeyDown={(e) => {
        if ((e.key === "Enter" || e.key === " ") && !disabled) {
          e.preventDefault();
          input.current?.click();
        }
      }}
      onDragOver={(e) => {
        e.preventDefault();
        if (!disabled) setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={onDrop}
      data-testid="dropzone"
    >
      <div style={{ fontSize: 22 }} aria-hidden="true">
        ⇪
      </div>
      <div>
        <strong>{title}</strong> or <span className="linklike">choose a file</span>
      </div>
      <div className="small muted">
        {hint ?? (
          <>
            <code>kubectl get nodes,pods,namespaces,… -A -o json</code> output: JSON or YAML, gzip or zstd compressed, .tar.gz or .zip
          </>
        )}
      </div>
      <input
        ref={input}
        type="file"
        accept={accept}
        hidden
        onChange={(e) => {
          const f = e.target.files?.[0];
          if (f) onFile(f);
          e.target.value = "";
        }}
        data-testid="file-input"
      />
    </div>
  );
}
