import { act, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LiveCycleRow, LiveSummary } from "../api/live";
import { LiveClusterPage } from "./LiveClusterPage";

class FakeSocket {
  static all: FakeSocket[] = [];
  readyState = 0;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason?: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  constructor(public url: string) {
    FakeSocket.all.push(this);
    setTimeout(() => {
      this.readyState = 1;
      this.onopen?.({});
    }, 0);
  }
  send() {}
  close() {
    this.readyState = 3;
  }
  push(...msgs: object[]) {
    for (const m of msgs) this.onmessage?.({ data: JSON.stringify(m) });
  }
}

const summary = (over: Partial<LiveSummary> = {}): LiveSummary => ({
  cycles: 3,
  match: 2,
  tie: 0,
  diverged: 1,
  skipped: 0,
  byCode: { score: 1 },
  lastCycleAt: "2026-01-01T10:00:03Z",
  ...over,
});

const row = (seq: number, pod: string, agreement: LiveCycleRow["agreement"], actual: string, replay: string): LiveCycleRow => ({
  seq,
  pod,
  namespace: pod.split("/")[0],
  trigger: "bound",
  trigger_source: "pod",
  observed: `2026-01-01T10:00:0${seq}Z`,
  occurred: null,
  actual_result: "Scheduled",
  actual_node: actual,
  actual_message: "",
  actual_scheduler: "default-scheduler",
  profile: "default-scheduler",
  result: "Scheduled",
  node: replay,
  message: "",
  tied_count: 1,
  feasible_count: 3,
  evaluated_count: 3,
  winner_total: 300,
  agreement,
  divergence: agreement === "diverged" ? "score" : "",
  explanations: agreement === "diverged" ? [{ code: "score", message: `the replay scores ${actual} lower` }] : [],
  notes: [],
  exact: true,
  gap: false,
  error: "",
  resource_version: String(100 + seq),
});

const ROWS = [row(1, "default/a", "match", "n1", "n1"), row(2, "shop/b", "diverged", "n2", "n3"), row(3, "default/c", "match", "n3", "n3")];

const cluster = {
  id: "c1",
  name: "prod",
  source: "kubeconfig",
  context: "prod",
  path: "",
  server: "https://10.0.0.1:6443",
  credential_kind: "token",
  credentials_stored: true,
  config_source: "default",
  config_map: "",
  config_map_key: "",
  config_notes: null,
  all_nodes: true,
  enabled: true,
  team: null,
  created: "2026-01-01T09:00:00Z",
  updated: "2026-01-01T09:00:00Z",
  status: "watching",
  status_message: "",
  worker: { id: "w-1", alive: true, leaseExpires: null, heartbeat: null },
  summary: summary(),
  checkpoint_at: null,
};

const health = {
  status: "watching",
  message: "",
  worker: { id: "w-1", alive: true, leaseExpires: null, heartbeat: null },
  streams: [
    { stream: "Pod", kind: "Pod", state: "watching", since: 1, resourceVersion: "10", synced: true, objects: 70, lists: 2, relists: 1, expired: 1, events: 9, bookmarks: 0, reconnects: 4, errors: 1, lastError: "410 Gone while watching pods", lastErrorAt: 1767225000, lastEventAt: null, lastListAt: null, retryAt: null },
    { stream: "PodGroup", kind: "PodGroup", state: "unavailable", since: 1, resourceVersion: "", synced: false, objects: 0, lists: 0, relists: 0, expired: 0, events: 0, bookmarks: 0, reconnects: 0, errors: 0, lastError: null, lastErrorAt: null, lastEventAt: null, lastListAt: null, retryAt: null },
  ],
  config: { source: "default", profiles: ["default-scheduler"] },
  configError: null,
  queue: 0,
  processed: 3,
  failures: 0,
  lastFailure: null,
  objects: 120,
  restoredAt: null,
  startedAt: 1767225000,
  updatedAt: null,
};

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

let calls: string[] = [];

function api(url: string): Response {
  calls.push(url);
  const u = new URL(url, "http://test");
  const p = u.pathname;
  if (p === "/api/v1/clusters/c1/") return json(cluster);
  if (p === "/api/v1/clusters/c1/health/") return json(health);
  if (p === "/api/v1/clusters/c1/divergences/") return json({ summary: summary(), recent: ROWS.filter((r) => r.agreement !== "match").reverse() });
  if (p === "/api/v1/clusters/c1/cycles/") {
    const agreement = u.searchParams.get("agreement");
    const rows = ROWS.filter((r) => !agreement || r.agreement === agreement);
    const size = Number(u.searchParams.get("page_size"));
    const page = u.searchParams.get("page") === "last" ? Math.max(1, Math.ceil(rows.length / size)) : Number(u.searchParams.get("page"));
    return json({ count: rows.length, next: null, previous: null, results: rows.slice((page - 1) * size, page * size) });
  }
  return json({ error: { code: "not_found", message: `no ${p}` } }, 404);
}

const seqs = () =>
  within(screen.getByRole("table", { name: "Decisions, newest first" }))
    .getAllByRole("row")
    .filter((r) => r.dataset.seq)
    .map((r) => Number(r.dataset.seq));

function verdict(seq: number, part: number, over: Record<string, unknown> = {}) {
  return {
    type: "live.verdict",
    pos: [seq, part],
    pod: "batch/job-4",
    trigger: "bound",
    triggerSource: "pod",
    observed: "2026-01-01T10:00:04Z",
    occurred: null,
    actual: { result: "Scheduled", node: "n1", message: null, scheduler: "default-scheduler" },
    replay: { result: "Scheduled", node: "n2", message: null, tiedCount: 1 },
    agreement: "diverged",
    divergence: "filter",
    explanations: [{ code: "filter", message: "the replay rejects n1: Insufficient cpu", details: { plugin: "NodeResourcesFit" } }],
    notes: [],
    exact: true,
    gap: false,
    error: null,
    ...over,
  };
}

beforeEach(() => {
  calls = [];
  FakeSocket.all = [];
  vi.stubGlobal("fetch", vi.fn(async (url: string) => api(url)));
  vi.stubGlobal("WebSocket", FakeSocket);
});
afterEach(() => vi.unstubAllGlobals());

function renderPage(path = "/live/c1") {
  return render(
    <MemoryRouter initialEntries={[path]}>
      <Routes>
        <Route path="/live/:id" element={<LiveClusterPage />} />
      </Routes>
    </MemoryRouter>,
  );
}

describe("the live cluster page", () => {
  it("lists the stored decisions, then follows the websocket after the last one", async () => {
    renderPage();
    await waitFor(() => expect(seqs()).toEqual([3, 2, 1]));
    await waitFor(() => expect(FakeSocket.all).toHaveLength(1));
    const ws = FakeSocket.all[0];
    expect(ws.url).toMatch(/\/ws\/clusters\/c1\/\?after=3&mode=live/);
    const table = screen.getByRole("table", { name: "Decisions, newest first" });
    const two = table.querySelector("tr[data-seq='2']")!;
    expect(two).toHaveAttribute("data-source", "rest");
    expect(two.querySelector("[data-side=cluster]")).toHaveTextContent("n2");
    expect(two.querySelector("[data-side=replay]")).toHaveTextContent("n3");
    expect(two).toHaveTextContent("the replay scores n2 lower");
    // the health, with its streams
    const streams = screen.getByRole("table", { name: "Streams" });
    const pod = within(streams).getByText("Pod").closest("tr")!;
    expect(within(pod).getByText("watching")).toBeInTheDocument();
    expect(pod.querySelector("[data-col=synced]")).toHaveTextContent("synced");
    expect(pod.querySelector("[data-col=objects]")).toHaveTextContent("70");
    expect(pod.querySelector("[data-col=relists]")).toHaveTextContent("1");
    expect(pod.querySelector("[data-col=reconnects]")).toHaveTextContent("4");
    // a 410 Gone relist on a stream watching again is routine: said so, the server's words kept in the title
    const note = streams.querySelector("tr[data-routine=true] td")!;
    expect(note).toHaveTextContent("routine relist: the watch's resourceVersion had expired (410 Gone)");
    expect(note.getAttribute("title")).toContain("410 Gone while watching pods");
    expect(pod.className).not.toContain("has-error");
    expect(within(streams).getByText("PodGroup").closest("tr")).toHaveTextContent("unavailable");

    const healthCalls = calls.filter((c) => c.endsWith("/health/")).length;
    await act(async () => {
      ws.push(
        { type: "hello", cluster: { id: "c1", name: "prod", status: "watching", message: "", cyclesDone: 3, summary: summary(), workerAlive: true }, mode: "live", resumeAfter: "3.1000000000" },
        { type: "nodes", offset: 0, names: ["n1", "n2"], nodeSet: 2 },
        { type: "cycle.start", pos: [4, 0], pod: "batch/job-4", profile: "default-scheduler", startIndex: 0, nodesToFind: 2, filterPlugins: [], reasons: [] },
        { type: "selection", pos: [4, 1], node: 1, tied: 1, tiedNodes: [1], total: 250 },
        { type: "cycle.end", pos: [4, 2], result: "Scheduled", node: "n2", message: null, nominatedNode: null },
        verdict(4, 3),
        { type: "status", status: "degraded", message: "Pod watch reconnecting", cyclesDone: 4, summary: summary({ cycles: 4, diverged: 2, byCode: { filter: 1, score: 1 } }), workerAlive: true },
      );
    });
    await waitFor(() => expect(seqs()).toEqual([4, 3, 2, 1]));
    const four = table.querySelector("tr[data-seq='4']")!;
    expect(four).toHaveAttribute("data-source", "stream");
    expect(four).toHaveAttribute("data-agreement", "diverged");
    expect(four).toHaveTextContent("the replay rejects n1: Insufficient cpu");
    expect(four.querySelector("[data-side=replay]")).toHaveTextContent("n2");
    // the status message: the header, the counts, the health again
    expect(screen.getByTestId("status-message")).toHaveTextContent("Pod watch reconnecting");
    expect(screen.getByTestId("summary-cycles")).toHaveTextContent("4 decisions");
    expect(document.querySelector("[data-summary=diverged]")).toHaveTextContent("2");
    expect(document.querySelector("[data-code-count=filter]")).toHaveTextContent("1");
    await waitFor(() => expect(calls.filter((c) => c.endsWith("/health/")).length).toBeGreaterThan(healthCalls));
    expect(screen.getByText(/1 arrived since you opened the page/)).toBeInTheDocument();
  });

  it("filters the stored and the streamed decisions alike, and keeps the filter in the address", async () => {
    const user = userEvent.setup();
    renderPage("/live/c1?agreement=diverged");
    await waitFor(() => expect(seqs()).toEqual([2]));
    expect(calls.some((c) => c.includes("/cycles/?agreement=diverged&page_size=50&page=last"))).toBe(true);
    await waitFor(() => expect(FakeSocket.all).toHaveLength(1));
    await act(async () => {
      FakeSocket.all[0].push(verdict(4, 0, { agreement: "match", divergence: null, explanations: [], replay: { result: "Scheduled", node: "n1", message: null, tiedCount: 1 } }), verdict(5, 0, { pod: "shop/job-5" }));
    });
    await waitFor(() => expect(seqs()).toEqual([5, 2]));
    await user.type(screen.getByRole("searchbox", { name: /search the decisions/i }), "shop/");
    expect(seqs()).toEqual([5, 2]);
    await user.selectOptions(screen.getByRole("combobox", { name: "Filter by agreement" }), "");
    await waitFor(() => expect(seqs()).toEqual([5, 2]));
    await user.clear(screen.getByRole("searchbox", { name: /search the decisions/i }));
    await waitFor(() => expect(seqs()).toEqual([5, 4, 3, 2, 1]));
  });
});
