import { forwardRef, useImperativeHandle, useMemo, useRef } from "react";

export interface LineEditorHandle {
  /** Put the caret at the start of a 1-based line and scroll it into view. */
  goToLine: (line: number) => void;
}

/** A textarea with a line-number gutter; lines with problems are marked in the gutter. */
export const LineEditor = forwardRef<
  LineEditorHandle,
  { value: string; onChange: (v: string) => void; badLines?: number[]; label: string; id?: string; height?: number }
>(function LineEditor({ value, onChange, badLines = [], label, id, height }, ref) {
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const count = useMemo(() => value.split("\n").length, [value]);
  const bad = useMemo(() => new Set(badLines), [badLines]);
  useImperativeHandle(ref, () => ({
    goToLine(line: number) {
      const ta = area.current;
      if (!ta) return;
      const lines = ta.value.split("\n");
      let offset = 0;
      for (let i = 0; i < Math.min(line - 1, lines.length); i++) offset += lines[i].length + 1;
      ta.focus();
      ta.setSelectionRange(offset, offset + (lines[line - 1]?.length ?? 0));
      const lh = 18;
      ta.scrollTop = Math.max(0, (line - 4) * lh);
    },
  }));
  return (
    <div className="editor" style={height ? { height } : undefined}>
      <div className="gutter" ref={gutter} aria-hidden="true">
        {Array.from({ length: count }, (_, i) => (
          <div key={i} className={bad.has(i + 1) ? "bad" : undefined}>
            {i + 1}
          </div>
        ))}
      </div>
      <textarea
        id={id}
        ref={area}
        aria-label={label}
        spellCheck={false}
        autoCapitalize="off"
        autoCorrect="off"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        onScroll={(e) => {
          if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
        }}
        onKeyDown={(e) => {
          // Tab inserts two spaces (YAML); Escape then Tab leaves the editor
          if (e.key === "Tab" && !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey && (e.currentTarget.dataset.escaped ?? "") !== "1") {
            e.preventDefault();
            const ta = e.currentTarget;
            const s = ta.selectionStart;
            const next = ta.value.slice(0, s) + "  " + ta.value.slice(ta.selectionEnd);
            onChange(next);
            requestAnimationFrame(() => ta.setSelectionRange(s + 2, s + 2));
          } else if (e.key === "Escape") {
            e.currentTarget.dataset.escaped = "1";
          } else {
            e.currentTarget.dataset.escaped = "";
          }
        }}
      />
    </div>
  );
});
