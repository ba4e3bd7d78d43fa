import { describe, expect, it } from "vitest";
import type { Utilization } from "../api/plans";
import { changedNodes, splitNames, topBars, toQuestion, totalUsage } from "./plans";
import type { PlanForm } from "./plans";

const usage = (cpu: number, pods: number, alloc = 4000) => ({
  allocatable: { cpuMilli: alloc, memoryBytes: 0, pods: 110 },
  requested: { cpuMilli: cpu, memoryBytes: 0, pods },
  percent: { cpuMilli: (100 * cpu) / alloc, memoryBytes: null, pods: (100 * pods) / 110 },
});

const u: Utilization = {
  before: { nodes: { a: usage(1000, 1), b: usage(0, 0), c: usage(2000, 2) }, total: usage(3000, 3, 12000) },
  after: { nodes: { a: usage(4000, 4), b: usage(1000, 1), c: usage(2000, 2) }, total: usage(7000, 7, 12000) },
};

const form = (over: Partial<PlanForm>): PlanForm => ({
  kind: "capacity",
  snapshot: "s1",
  pods: [""],
  order: "round-robin",
  max: "",
  nodes: "",
  selector: "",
  respectPdb: false,
  templates: "",
  templateManifest: "",
  maxNodes: "10",
  allNodes: false,
  ...over,
});

describe("plan helpers", () => {
  it("keeps the largest bars and sums the rest", () => {
    expect(topBars({ a: 1, b: 5, c: 5, d: 2 }, 3)).toEqual([
      { label: "b", value: 5 },
      { label: "c", value: 5 },
      { label: "2 other nodes", value: 3 },
    ]);
    expect(topBars({ z1: 2, z0: 2 })).toEqual([
      { label: "z0", value: 2 },
      { label: "z1", value: 2 },
    ]);
  });

  it("reads utilization before and after", () => {
    expect(totalUsage(u)[0]).toEqual({ resource: "cpuMilli", label: "CPU", before: 25, after: (100 * 7000) / 12000 });
    expect(changedNodes(u).map((n) => n.node)).toEqual(["a", "b"]);
  });

  it("turns the form into the endpoint's request, or names what is missing", () => {
    expect(toQuestion(form({}))).toEqual({ field: "pods", problem: "Paste the pod to copy (YAML or JSON)." });
    expect(toQuestion(form({ pods: ["kind: Pod", " "], max: "5" }))).toEqual({
      question: { kind: "capacity", snapshot: "s1", all_nodes: false, pods: ["kind: Pod"], order: "round-robin", max: 5 },
    });
    expect(toQuestion(form({ pods: ["x"], max: "-1" }))).toMatchObject({ field: "max" });
    expect(toQuestion(form({ kind: "drain" }))).toMatchObject({ field: "nodes" });
    expect(toQuestion(form({ kind: "drain", nodes: "a, b\nc" }))).toMatchObject({ question: { nodes: ["a", "b", "c"], respect_pdb: false } });
    expect(toQuestion(form({ kind: "scale-up", templates: "a b", templateManifest: "kind: Node" }))).toMatchObject({
      question: { templates: ["a", "b", "kind: Node"], max_nodes: 10 },
    });
    expect(toQuestion(form({ snapshot: "" }))).toMatchObject({ field: "snapshot" });
    expect(splitNames(" a,,b  c ")).toEqual(["a", "b", "c"]);
  });
});
