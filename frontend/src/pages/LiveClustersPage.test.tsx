import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { MemoryRouter } from "react-router-dom";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LiveCluster } from "../api/live";
import { LiveClustersPage } from "./LiveClustersPage";

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

const cluster = (id: string, name: string, over: Partial<LiveCluster> = {}): LiveCluster => ({
  id,
  name,
  source: "kubeconfig",
  context: name,
  path: "",
  server: `https://${name}.example:6443`,
  credential_kind: "token",
  credentials_stored: true,
  config_source: "configmap",
  config_map: "kube-system/kube-scheduler-config",
  config_map_key: "",
  config_notes: null,
  all_nodes: true,
  enabled: true,
  team: null,
  created: "2026-01-01T09:00:00Z",
  updated: "2026-01-01T09:00:00Z",
  status: "watching",
  status_message: "",
  worker: { id: "w-7", alive: true, leaseExpires: null, heartbeat: null },
  summary: { cycles: 120, match: 112, tie: 5, diverged: 3, skipped: 0, byCode: { tie: 5, score: 3 }, lastCycleAt: "2026-01-01T10:00:00Z" },
  checkpoint_at: null,
  ...over,
});

let clusters: LiveCluster[] = [];
let requests: { method: string; url: string; body: unknown }[] = [];

beforeEach(() => {
  clusters = [
    cluster("c1", "prod"),
    cluster("c2", "staging", { status: "error", status_message: "401 Unauthorized: the token was refused", worker: { id: "", alive: false, leaseExpires: null, heartbeat: null } }),
  ];
  requests = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string, init: RequestInit) => {
      const method = init?.method ?? "GET";
      requests.push({ method, url, body: typeof init?.body === "string" ? JSON.parse(init.body) : init?.body });
      const m = url.match(/^\/api\/v1\/clusters\/([^/?]+)\/$/);
      if (method === "GET") return json({ count: clusters.length, next: null, previous: null, results: clusters });
      if (method === "PATCH" && m) {
        const c = clusters.find((x) => x.id === m[1])!;
        Object.assign(c, { enabled: (init.body && JSON.parse(init.body as string).enabled) as boolean, status: "stopped" });
        return json(c);
      }
      if (method === "DELETE" && m) {
        clusters = clusters.filter((x) => x.id !== m[1]);
        return new Response(null, { status: 204 });
      }
      return json({ error: { code: "not_found", message: "no" } }, 404);
    }),
  );
});
afterEach(() => vi.unstubAllGlobals());

const rowOf = (id: string) => document.querySelector(`tr[data-cluster='${id}']`) as HTMLElement;

describe("the clusters list", () => {
  it("shows each cluster's server, status with its message, worker and counts", async () => {
    render(
      <MemoryRouter>
        <LiveClustersPage />
      </MemoryRouter>,
    );
    await screen.findByRole("link", { name: "prod" });
    const prod = rowOf("c1");
    expect(prod).toHaveTextContent("https://prod.example:6443");
    expect(prod.querySelector("[data-cluster-status]")).toHaveAttribute("data-cluster-status", "watching");
    expect(prod).toHaveTextContent("alive w-7");
    expect(prod).toHaveTextContent("config from kube-system/kube-scheduler-config");
    for (const [k, n] of [["match", 112], ["tie", 5], ["diverged", 3], ["skipped", 0]] as const) {
      expect(prod.querySelector(`[data-count=${k}] .n`)).toHaveTextContent(String(n));
    }
    expect(within(prod).getByRole("link", { name: "prod" })).toHaveAttribute("href", "/live/c1");
    const staging = rowOf("c2");
    expect(staging.querySelector("[data-cluster-status]")).toHaveAttribute("data-cluster-status", "error");
    expect(staging).toHaveTextContent("401 Unauthorized: the token was refused");
    expect(staging).toHaveTextContent("no worker");
  });

  it("disables a cluster, and deletes one only once confirmed", async () => {
    const user = userEvent.setup();
    render(
      <MemoryRouter>
        <LiveClustersPage />
      </MemoryRouter>,
    );
    await screen.findByRole("link", { name: "prod" });
    await user.click(screen.getByRole("button", { name: "Disable prod" }));
    await waitFor(() => expect(within(rowOf("c1")).getByRole("button", { name: "Enable prod" })).toBeInTheDocument());
    expect(requests.find((r) => r.method === "PATCH")).toEqual({ method: "PATCH", url: "/api/v1/clusters/c1/", body: { enabled: false, verify: false } });
    expect(rowOf("c1")).toHaveTextContent("disabled");

    await user.click(screen.getByRole("button", { name: "Delete staging" }));
    const confirm = screen.getByRole("group", { name: "Delete staging?" });
    // the safe choice has the focus; keeping deletes nothing
    expect(within(confirm).getByRole("button", { name: "Keep" })).toHaveFocus();
    await user.click(within(confirm).getByRole("button", { name: "Keep" }));
    expect(requests.some((r) => r.method === "DELETE")).toBe(false);
    await user.click(screen.getByRole("button", { name: "Delete staging" }));
    await user.click(within(screen.getByRole("group", { name: "Delete staging?" })).getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(rowOf("c2")).toBeNull());
    expect(requests.filter((r) => r.method === "DELETE").map((r) => r.url)).toEqual(["/api/v1/clusters/c2/"]);
    expect(rowOf("c1")).not.toBeNull();
  });
});
