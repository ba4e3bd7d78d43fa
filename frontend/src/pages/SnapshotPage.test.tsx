import { render, screen, within } from "@testing-library/react";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SnapshotPage } from "./SnapshotPage";

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

const page = (count: number, results: unknown[] = []) => ({ count, next: null, previous: null, results });

const snapshot = {
  id: "s1",
  name: "dense",
  content_hash: "h",
  source_format: "gzip",
  size_bytes: 1000,
  created: "2026-01-01T00:00:00Z",
  node_count: 0,
  pod_count: 150_042,
  pending_count: 2,
  kinds: {},
  ignored: {},
  config: null,
  status: "ready",
};

const pendingPod = (name: string) => ({
  key: `default/${name}`,
  namespace: "default",
  name,
  state: "pending",
  phase: "Pending",
  node: null,
  nominatedNode: null,
  requests: { cpu: 100 },
  priority: 0,
  priorityClassName: "",
  schedulerName: "default-scheduler",
  schedulingGates: [],
});

let urls: string[] = [];

beforeEach(() => {
  urls = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string) => {
      urls.push(url);
      if (url === "/api/v1/snapshots/s1/") return json(snapshot);
      if (url.startsWith("/api/v1/snapshots/s1/pods/?state=pending")) return json(page(2, [pendingPod("a"), pendingPod("b")]));
      if (url.startsWith("/api/v1/snapshots/s1/pods/?state=running")) return json(page(150_000, [{}]));
      if (url.startsWith("/api/v1/snapshots/s1/pods/?state=finished")) return json(page(40));
      if (url.startsWith("/api/v1/")) return json(page(0));
      return json({ error: { code: "not_found", message: "no", details: null } }, 404);
    }),
  );
});

afterEach(() => vi.unstubAllGlobals());

describe("SnapshotPage", () => {
  it("counts the pods by state and lists the pending ones without reading every pod", async () => {
    render(
      <MemoryRouter initialEntries={["/snapshots/s1"]}>
        <Routes>
          <Route path="/snapshots/:id" element={<SnapshotPage />} />
        </Routes>
      </MemoryRouter>,
    );
    const table = await screen.findByRole("table", { name: "Pending pods" });
    expect(within(table).getAllByRole("row")).toHaveLength(3);
    const states = screen.getByLabelText("Pods by state");
    expect(states).toHaveTextContent("running 150000");
    expect(states).toHaveTextContent("pending 2");
    expect(states).toHaveTextContent("finished 40");
    const pods = urls.filter((u) => u.startsWith("/api/v1/snapshots/s1/pods/"));
    // the pending pods, and one result each for the other two counts: never the whole list, page by page
    expect(pods.every((u) => /[?&]state=(pending|running|finished)\b/.test(u))).toBe(true);
    expect(pods.filter((u) => /state=(running|finished)/.test(u)).every((u) => u.includes("page_size=1&") || u.endsWith("page_size=1"))).toBe(true);
  });
});
