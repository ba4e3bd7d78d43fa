import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { ResultBadge } from "./Badges";

export interface QueueItem {
  seq: number;
  pod: string;
  result: string;
  node: string | null;
  message?: string | null;
}

const ROW = 40;

export function filterQueue(items: QueueItem[], text: string, result: string): QueueItem[] {
  const needle = text.trim().toLowerCase();
  return items.filter(
    (i) =>
      (!result || i.result === result) &&
      (!needle || i.pod.toLowerCase().includes(needle) || (i.node ?? "").toLowerCase().includes(needle)),
  );
}

export function PodQueue({
  items,
  currentSeq,
  onOpen,
  pendingCount = 0,
}: {
  items: QueueItem[];
  currentSeq: number | null;
  onOpen: (seq: number) => void;
  /** Cycles still to come (live replays). */
  pendingCount?: number;
}) {
  const [text, setText] = useState("");
  const [result, setResult] = useState("");
  const shown = useMemo(() => filterQueue(items, text, result), [items, text, result]);
  const results = useMemo(() => {
    const m = new Map<string, number>();
    for (const i of items) m.set(i.result, (m.get(i.result) ?? 0) + 1);
    return [...m.entries()].sort((a, b) => b[1] - a[1]);
  }, [items]);
  const bodyRef = useRef<HTMLDivElement>(null);
  const id = useId();
  const [active, setActive] = useState(0);
  const virtualizer = useVirtualizer({
    count: shown.length,
    getScrollElement: () => bodyRef.current,
    estimateSize: () => ROW,
    overscan: 10,
    initialRect: { width: 280, height: 500 },
  });

  // keep the current cycle in view (live following moves it)
  useEffect(() => {
    if (currentSeq === null) return;
    const k = shown.findIndex((i) => i.seq === currentSeq);
    if (k >= 0) {
      setActive(k);
      // scroll only when it is out of view: a scroll lays the page out at once, before the new cycle is painted.
      // Judged from the list's own scroll position (rows are ROW high): the virtualizer's record of it can lag
      // behind a scroll it made itself, e.g. after following a replay to its last cycle and going back to the first
      const el = bodyRef.current;
      const top = k * ROW;
      if (!el || top < el.scrollTop || top + ROW > el.scrollTop + el.clientHeight) {
        virtualizer.scrollToIndex(k, { align: "auto" });
      }
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [currentSeq, shown.length]);

  const move = (to: number) => {
    if (!shown.length) return;
    const k = Math.max(0, Math.min(shown.length - 1, to));
    setActive(k);
    virtualizer.scrollToIndex(k, { align: "auto" });
  };
  const onKeyDown = (e: KeyboardEvent) => {
    switch (e.key) {
      case "ArrowDown":
        move(active + 1);
        break;
      case "ArrowUp":
        move(active - 1);
        break;
      case "Home":
        move(0);
        break;
      case "End":
        move(shown.length - 1);
        break;
      case "PageDown":
        move(active + 10);
        break;
      case "PageUp":
        move(active - 10);
        break;
      case "Enter":
      case " ":
        if (shown[active]) onOpen(shown[active].seq);
        break;
      default:
        return;
    }
    e.preventDefault();
  };

  return (
    <section className="panel queue vgrid" aria-label="Pod queue">
      <h2 style={{ fontSize: 14, margin: "2px 0 6px" }}>
        Pod queue <span className="muted small">({items.length.toLocaleString()}{pendingCount > 0 ? ` + ${pendingCount.toLocaleString()} to come` : ""})</span>
      </h2>
      <div className="row" style={{ gap: 6, marginBottom: 6 }}>
        <input
          type="search"
          placeholder="Filter pods or nodes…"
          aria-label="Filter the pod queue"
          value={text}
          onChange={(e) => setText(e.target.value)}
          style={{ flex: 1, minWidth: 0 }}
        />
        <select aria-label="Filter the queue by result" value={result} onChange={(e) => setResult(e.target.value)} style={{ width: 96 }}>
          <option value="">All</option>
          {results.map(([r, n]) => (
            <option key={r} value={r}>
              {r} ({n})
            </option>
          ))}
        </select>
      </div>
      <div
        ref={bodyRef}
        className="vbody"
        role="listbox"
        aria-label="Scheduling cycles in queue order"
        tabIndex={0}
        aria-activedescendant={shown[active] ? `${id}-q${active}` : undefined}
        onKeyDown={onKeyDown}
      >
        {shown.length === 0 ? (
          <div className="empty small">{items.length ? "No pod matches." : "No cycle yet."}</div>
        ) : (
          <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
            {virtualizer.getVirtualItems().map((v) => {
              const it = shown[v.index];
              return (
                <div
                  key={it.seq}
                  id={`${id}-q${v.index}`}
                  role="option"
                  aria-selected={it.seq === currentSeq}
                  className={`qrow${it.seq === currentSeq ? " current" : ""}${v.index === active ? " active" : ""}`}
                  style={{ top: v.start, height: ROW }}
                  onClick={() => {
                    setActive(v.index);
                    onOpen(it.seq);
                  }}
                  title={it.message || undefined}
                >
                  <span className="muted num small">{it.seq}</span>
                  <span className="ellipsis" title={it.pod}>
                    {it.pod}
                  </span>
                  <ResultBadge result={it.result} compact />
                  <span className="node ellipsis">{it.node ? `→ ${it.node}` : it.result === "Scheduled" ? "" : it.result}</span>
                </div>
              );
            })}
          </div>
        )}
      </div>
    </section>
  );
}
