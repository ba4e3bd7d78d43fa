import { describe, expect, it } from "vitest";
import { amountText, requestsText, requirementMatches, resourceLines, termMatches, termText, tolerates, untoleratedTaints } from "./podspec";

describe("amounts", () => {
  it("writes CPU in cores only, memory in binary units", () => {
    expect(amountText("cpu", 500)).toBe("0.5 CPU");
    expect(amountText("cpu", 32600)).toBe("32.6 CPU");
    expect(amountText("cpu", 33000)).toBe("33 CPU");
    expect(amountText("memory", 2 ** 30)).toBe("1Gi memory");
    expect(amountText("nvidia.com/gpu", 8)).toBe("8 nvidia.com/gpu");
    expect(requestsText({ cpu: 40000, memory: 0, "nvidia.com/gpu": 1 })).toBe("40 CPU · 1 nvidia.com/gpu");
  });
});

describe("resourceLines", () => {
  it("marks a request over what is free, and counts the pod itself", () => {
    const lines = resourceLines(
      { cpu: 40000, memory: 2 ** 30 },
      { allocatable: { cpu: 32000, memory: 2 ** 35, pods: 110 }, requested: { cpu: 8000, memory: 0, pods: 110 }, free: { cpu: 24000, memory: 2 ** 35, pods: 0 } },
    );
    expect(lines.map((l) => [l.resource, l.request, l.free, l.short])).toEqual([
      ["cpu", 40000, 24000, true],
      ["memory", 2 ** 30, 2 ** 35, false],
      ["pods", 1, 0, true],
    ]);
  });
});

describe("node selector terms", () => {
  const labels = { "topology.kubernetes.io/zone": "zone-b", pool: "gpu", cores: "64" };
  it("evaluates every operator as the API defines it", () => {
    expect(requirementMatches(labels, { key: "pool", operator: "In", values: ["gpu", "cpu"] })).toBe(true);
    expect(requirementMatches(labels, { key: "pool", operator: "NotIn", values: ["gpu"] })).toBe(false);
    expect(requirementMatches(labels, { key: "absent", operator: "NotIn", values: ["x"] })).toBe(true);
    expect(requirementMatches(labels, { key: "pool", operator: "Exists" })).toBe(true);
    expect(requirementMatches(labels, { key: "pool", operator: "DoesNotExist" })).toBe(false);
    expect(requirementMatches(labels, { key: "cores", operator: "Gt", values: ["32"] })).toBe(true);
    expect(requirementMatches(labels, { key: "cores", operator: "Lt", values: ["32"] })).toBe(false);
    expect(requirementMatches(labels, { key: "pool", operator: "Gt", values: ["1"] })).toBe(false);
  });
  it("ANDs a term's requirements, matches metadata.name fields, and an empty term matches nothing", () => {
    const term = { matchExpressions: [{ key: "pool", operator: "In", values: ["gpu"] }, { key: "topology.kubernetes.io/zone", operator: "In", values: ["zone-a"] }] };
    expect(termMatches(labels, "n1", term)).toBe(false);
    expect(termText(term)).toBe("pool=gpu and topology.kubernetes.io/zone=zone-a");
    expect(termMatches(labels, "n1", { matchFields: [{ key: "metadata.name", operator: "In", values: ["n1"] }] })).toBe(true);
    expect(termMatches(labels, "n1", {})).toBe(false);
  });
});

describe("taints and tolerations", () => {
  const gpu = { key: "dedicated", value: "gpu", effect: "NoSchedule" };
  it("tolerates by key, value and effect; Exists with no key tolerates everything", () => {
    expect(tolerates({ key: "dedicated", operator: "Equal", value: "gpu", effect: "NoSchedule" }, gpu)).toBe(true);
    expect(tolerates({ key: "dedicated", operator: "Equal", value: "cpu" }, gpu)).toBe(false);
    expect(tolerates({ key: "dedicated", operator: "Exists", effect: "NoExecute" }, gpu)).toBe(false);
    expect(tolerates({ operator: "Exists" }, gpu)).toBe(true);
  });
  it("leaves PreferNoSchedule taints out: the filter does not look at them", () => {
    const soft = { key: "spot", effect: "PreferNoSchedule" };
    expect(untoleratedTaints([gpu, soft], [])).toEqual([gpu]);
  });
});
