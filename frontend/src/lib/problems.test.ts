import { describe, expect, it } from "vitest";
import { groupProblems, lineForPath, parseConfigProblem, splitPath } from "./problems";

const YAML = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 1
      - name: Foo
        weight: 2
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: Bad
- schedulerName: second
  plugins:
    filter:
      disabled:
      - name: "*"
`;

describe("config problems", () => {
  it("splits a field path from the message", () => {
    expect(parseConfigProblem('profiles[0].plugins.score.enabled[1].name: Not found: "Foo"')).toEqual({
      path: "profiles[0].plugins.score.enabled[1].name",
      message: 'Not found: "Foo"',
    });
    expect(parseConfigProblem('strict decoding error: unknown field "profiles[0].bogus"').path).toBe("profiles[0].bogus");
    expect(parseConfigProblem("something went wrong: badly").path).toBe("");
  });
  it("finds a path's line in the YAML", () => {
    expect(splitPath("profiles[0].plugins.score.enabled[1].name")).toEqual(["profiles", 0, "plugins", "score", "enabled", 1, "name"]);
    expect(lineForPath(YAML, "profiles[0].plugins.score.enabled[1].name")).toBe(10);
    expect(lineForPath(YAML, "profiles[0].plugins.score.enabled[1].weight")).toBe(11);
    expect(lineForPath(YAML, "profiles[0].pluginConfig[0].args.scoringStrategy.type")).toBe(16);
    expect(lineForPath(YAML, "profiles[1].plugins.filter.disabled[0].name")).toBe(21);
    expect(lineForPath(YAML, "kind")).toBe(2);
    // a missing tail: the deepest part found
    expect(lineForPath(YAML, "profiles[1].plugins.score")).toBe(18);
    expect(lineForPath(YAML, "nothing")).toBeNull();
  });
});

describe("groupProblems", () => {
  it("groups by document then object, keeping the order", () => {
    const g = groupProblems([
      { document: "a", object: "Node x", field: "f1", message: "m1" },
      { document: "b", object: "", field: "", message: "m2" },
      { document: "a", object: "Node x", field: "f2", message: "m3" },
      { document: "a", object: "Pod y", field: "", message: "m4" },
    ]);
    expect(g.map((d) => d.document)).toEqual(["a", "b"]);
    expect(g[0].objects.map((o) => [o.object, o.problems.length])).toEqual([
      ["Node x", 2],
      ["Pod y", 1],
    ]);
  });
});
