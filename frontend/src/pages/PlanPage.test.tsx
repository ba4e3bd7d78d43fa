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
