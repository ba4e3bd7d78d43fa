import { describe, expect, it } from "vitest";
import type { Replay } from "../api/types";
import { replayLabel } from "./replayLabel";

function replay(over: Partial<Replay>): Replay {
  return {
    id: "0123456789abcdef",
    name: "scale-31000 (2000 nodes)",
    snapshot: "s",
    configuration: null,
    config: null,
    options: { allNodes: true, preemption: "evict" },
    status: "succeeded",
    reason: "",
    attempt: 1,
    cycles_done: 1,
    cycles_total: 1,
    progress: 1,
    created: "2026-12-01T10:00:00Z",
    started: null,
    finished: null,
    summary: {},
    ...over,
  };
}

describe("replayLabel", () => {
  it("tells apart replays of one snapshot by configuration and options", () => {
    const labels = [
      replayLabel(replay({})),
      replayLabel(replay({ configuration: "c1" }), { c1: "most-allocated" }),
      replayLabel(replay({ config: { kind: "KubeSchedulerConfiguration" } })),
      replayLabel(replay({ options: { allNodes: false, preemption: "dry-run" } })),
      replayLabel(replay({ status: "running" })),
    ];
    expect(new Set(labels).size).toBe(labels.length);
    expect(labels[0]).toMatch(/^scale-31000 \(2000 nodes\) · snapshot's or default configuration · every node · /);
    expect(labels[1]).toContain("configuration “most-allocated”");
    expect(labels[2]).toContain("inline configuration");
    expect(labels[3]).toContain("sampled, preemption dry-run");
    expect(labels[4]).toMatch(/ · running$/);
  });
});
