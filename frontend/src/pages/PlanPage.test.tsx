import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Plan } from "../api/plans";
import { PlanPage, PlansPage } from "./PlanPage";

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

const usage = (cpu: number) => ({
  allocatable: { cpuMilli: 4000, memoryBytes: 8, pods: 110 },
  requested: { cpuMilli: cpu, memoryBytes: 0, pods: 1 },
  percent: { cpuMilli: cpu / 40, memoryBytes: 0, pods: 0.9 },
});

const capacityPlan: Plan = {
  id: "p1",
  kind: "capacity",
  name: "capacity of prod",
  snapshot: "s1",
  snapshot_name: "prod",
  request: {},
  config: null,
  status: "succeeded",
  error: "",
  replays: [{ label: "capacity", replay: "r1", snapshot: "s2" }],
  created: "2026-01-01T00:00:00Z",
  finished: "2026-01-01T00:00:05Z",
  result: {
    kind: "CapacityPlan",
    replicas: 3,
    perNode: { a: 2, b: 1 },
    perZone: { z1: 2, z2: 1 },
    stop: {
      reason: "unschedulable",
      pod: "default/web-bcdfg",
      spec: "default/web",
      result: "Unschedulable",
      message: "0/2 nodes are available: 2 Insufficient cpu.",
      nodes: { a: "NodeResourcesFit: Insufficient cpu", b: "NodeResourcesFit: Insufficient cpu" },
    },
    order: "round-robin",
    max: 10000,
    pods: [],
    utilization: { before: { nodes: { a: usage(0), b: usage(0) }, total: usage(0) }, after: { nodes: { a: usage(2000), b: usage(1000) }, total: usage(1500) } },
  },
};

const drainPlan: Plan = {
  ...capacityPlan,
  id: "p2",
  kind: "drain",
  name: "drain a",
  result: {
    kind: "DrainPlan",
    nodes: ["a"],
    respectPdb: true,
    summary: { pods: 3, evicted: 1, deleted: 0, stay: 2, recreated: 1, scheduled: 0, unschedulable: 1, budgetsViolated: 0 },
    pods: [
      { pod: "default/agent", node: "a", action: "stays", reason: "DaemonSet pod" },
      { pod: "default/web-1", node: "a", action: "stays", reason: "eviction refused by a PodDisruptionBudget: Cannot evict pod" },
      {
        pod: "default/db-0",
        node: "a",
        action: "evicted",
        reason: "recreated by StatefulSet db",
        replacement: "default/db-0",
        result: "Unschedulable",
        selectedNode: null,
        message: "0/2 nodes are available: 1 node(s) were unschedulable, 1 Insufficient cpu.",
      },
    ],
    budgets: [{ name: "default/web", disruptionsAllowed: 0, desiredHealthy: 1, currentHealthy: 1, violated: false, evicted: [], blocked: ["default/web-1"] }],
    otherPending: [],
  },
};

const scaleUpPlan: Plan = {
  ...capacityPlan,
  id: "p3",
  kind: "scale-up",
  name: "scale-up",
  replays: [
    { label: "a", replay: "r1", snapshot: "s2" },
    { label: "big", replay: "r2", snapshot: "s3" },
  ],
  result: {
    kind: "ScaleUpPlan",
    templates: [
      {
        template: "a",
        source: "node",
        maxNodes: 10,
        stop: "no-progress",
        nodesAdded: 1,
        nodesNeeded: null,
        pendingPods: 2,
        scheduledBefore: 1,
        scheduled: 1,
        steps: [
          { nodes: 0, scheduled: 1, unschedulable: 1, podsOnNewNodes: {} },
          { nodes: 1, scheduled: 1, unschedulable: 1, podsOnNewNodes: { "a-template-1": 0 } },
        ],
        helpless: [{ pod: "default/huge", result: "Unschedulable", message: "m", why: "NodeResourcesFit: Insufficient cpu", helps: false }],
      },
      {
        template: "big",
        source: "big.yaml",
        maxNodes: 10,
        stop: "fits",
        nodesAdded: 1,
        nodesNeeded: 1,
        pendingPods: 2,
        scheduledBefore: 1,
        scheduled: 2,
        steps: [
          { nodes: 0, scheduled: 1, unschedulable: 1, podsOnNewNodes: {} },
          { nodes: 1, scheduled: 2, unschedulable: 0, podsOnNewNodes: { "big-template-1": 1 } },
        ],
        helpless: [],
      },
    ],
  },
};

let requests: { method: string; url: string; body: unknown }[] = [];

beforeEach(() => {
  requests = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string, init: RequestInit) => {
      const method = init?.method ?? "GET";
      requests.push({ method, url, body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined });
      if (url.startsWith("/api/v1/replays/r1/cycles/")) return json({ count: 1, next: null, previous: null, results: [{ seq: 4 }] });
      if (url === "/api/v1/plans/p1/") return json(capacityPlan);
      if (url === "/api/v1/plans/p2/") return json(drainPlan);
      if (url === "/api/v1/plans/p3/") return json(scaleUpPlan);
      if (url.startsWith("/api/v1/snapshots/"))
        return json({ count: 1, next: null, previous: null, results: [{ id: "s1", name: "prod", node_count: 2 }] });
      if (url.startsWith("/api/v1/plans/") && method === "GET") return json({ count: 0, next: null, previous: null, results: [] });
      if (url === "/api/v1/plans/" && method === "POST") return json({ ...capacityPlan, id: "p1" }, 201);
      return json({ error: { code: "not_found", message: "no", details: null } }, 404);
    }),
  );
});

afterEach(() => vi.unstubAllGlobals());

describe("PlanPage", () => {
  it("shows a capacity answer: counts, charts, the next copy's message, links into the replay", async () => {
    render(
      <MemoryRouter initialEntries={["/plans/p1"]}>
        <Routes>
          <Route path="/plans/:id" element={<PlanPage />} />
        </Routes>
      </MemoryRouter>,
    );
    expect(await screen.findByRole("heading", { name: "3 more copies fit" })).toBeInTheDocument();
    expect(screen.getByRole("figure", { name: "Copies per zone" })).toHaveTextContent("z12");
    expect(screen.getByText("0/2 nodes are available: 2 Insufficient cpu.")).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Why here?" })).toHaveAttribute("href", "/replays/r1/pods/default/web-bcdfg");
    expect(await screen.findByRole("link", { name: "cycle" })).toHaveAttribute("href", "/replays/r1/cycles/4");
    expect(requests.some((r) => r.url === "/api/v1/replays/r1/cycles/?pod=default%2Fweb-bcdfg")).toBe(true);
    expect(screen.getByRole("link", { name: "Open the plan's replay" })).toHaveAttribute("href", "/replays/r1");
    expect(screen.getByRole("region", { name: "Utilization before and after" })).toHaveTextContent("0.0% → 37.5%");
  });

  it("shows a drain and a scale-up answer", async () => {
    const { unmount } = render(
      <MemoryRouter initialEntries={["/plans/p2"]}>
        <Routes>
          <Route path="/plans/:id" element={<PlanPage />} />
        </Routes>
      </MemoryRouter>,
    );
    expect(await screen.findByRole("heading", { name: "Drain a: 1 recreated, 1 unschedulable" })).toBeInTheDocument();
    expect(screen.getByText("0/2 nodes are available: 1 node(s) were unschedulable, 1 Insufficient cpu.")).toBeInTheDocument();
    expect(screen.getByText(/default\/web: respected \(healthy 1 of 1 desired; 0 evicted, 1 blocked\)/)).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Why here?" })).toHaveAttribute("href", "/replays/r1/pods/default/db-0");
    unmount();
    render(
      <MemoryRouter initialEntries={["/plans/p3"]}>
        <Routes>
          <Route path="/plans/:id" element={<PlanPage />} />
        </Routes>
      </MemoryRouter>,
    );
    expect(await screen.findByRole("heading", { name: /^big: 1 node makes all 2 pending pods schedulable/ })).toBeInTheDocument();
    expect(screen.getByRole("heading", { name: "Pods no number of such nodes helps" })).toBeInTheDocument();
    expect(screen.getByText("NodeResourcesFit: Insufficient cpu")).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Replay (big)" })).toHaveAttribute("href", "/replays/r2");
  });

  it("asks a question: names what is missing, then posts it and opens the plan", async () => {
    const user = userEvent.setup();
    render(
      <MemoryRouter initialEntries={["/plans"]}>
        <Routes>
          <Route path="/plans" element={<PlansPage />} />
          <Route path="/plans/:id" element={<PlanPage />} />
        </Routes>
      </MemoryRouter>,
    );
    const ask = await screen.findByRole("button", { name: "Plan" });
    await user.click(ask);
    expect(screen.getByRole("alert")).toHaveTextContent("pods: Paste the pod to copy (YAML or JSON).");
    await user.type(screen.getByLabelText("Pod 1 (YAML or JSON)"), "kind: Pod");
    await user.type(screen.getByLabelText("At most"), "5");
    await user.click(ask);
    await waitFor(() => expect(requests.some((r) => r.method === "POST")).toBe(true));
    const post = requests.find((r) => r.method === "POST")!;
    expect(post.body).toEqual({ kind: "capacity", snapshot: "s1", all_nodes: false, pods: ["kind: Pod"], order: "round-robin", max: 5 });
    expect(await screen.findByRole("heading", { name: "3 more copies fit" })).toBeInTheDocument();
  });
});
