import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { LiveHealth, StreamHealth } from "../api/live";
import { ClusterHealthPanel, isRoutineRelist } from "./ClusterHealth";

function stream(over: Partial<StreamHealth>): StreamHealth {
  return {
    stream: "pods",
    kind: "Pod",
    state: "watching",
    since: 0,
    resourceVersion: "12",
    synced: true,
    objects: 3,
    lists: 2,
    relists: 1,
    expired: 1,
    events: 5,
    bookmarks: 0,
    reconnects: 0,
    errors: 0,
    lastError: null,
    lastErrorAt: null,
    lastEventAt: null,
    lastListAt: null,
    retryAt: null,
    ...over,
  };
}

describe("stream health", () => {
  it("shows a 410 Gone relist as routine, and other failures as errors", () => {
    const gone = stream({ stream: "pods", lastError: "410 Gone while watching pods: too old resource version: 5 (9)", lastErrorAt: 1 });
    const refused = stream({ stream: "nodes", state: "backoff", lastError: "connection refused", lastErrorAt: 1 });
    const health: LiveHealth = {
      status: "watching",
      message: "",
      worker: { alive: true, id: "w1", leaseExpires: null, heartbeat: null },
      streams: [gone, refused],
      config: null,
      configError: null,
      queue: 0,
      processed: 4,
      failures: 0,
      lastFailure: null,
      objects: 40,
      restoredAt: null,
      startedAt: 1,
    } as LiveHealth;
    const { container } = render(<ClusterHealthPanel health={health} />);
    expect(isRoutineRelist(gone)).toBe(true);
    expect(isRoutineRelist(refused)).toBe(false);
    // a 410 on a stream that is failing again is not routine
    expect(isRoutineRelist({ ...gone, state: "backoff" })).toBe(false);
    expect(container.querySelector("tr[data-stream=pods]")?.className ?? "").not.toContain("has-error");
    expect(container.querySelector("tr[data-stream=nodes]")?.className).toContain("has-error");
    expect(screen.getByText(/routine relist: the watch's resourceVersion had expired \(410 Gone\)/)).toBeInTheDocument();
    expect(screen.getByText(/connection refused/)).toBeInTheDocument();
  });
});
