import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../api/client";
import { UploadForm } from "../pages/SnapshotsPage";
import { UploadProblems } from "./Problems";

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

afterEach(() => vi.unstubAllGlobals());

const refused = {
  error: {
    code: "invalid_upload",
    message: "invalid upload: ...",
    details: [
      { document: "cluster.yaml (document 1)", object: "Node a", field: "status.allocatable.cpu", message: "invalid quantity 'abc'" },
      { document: "cluster.yaml (document 2)", object: "Pod default/p", field: "spec.containers[0].resources.requests.memory", message: "invalid quantity '12XX'" },
      { document: "cluster.yaml (document 2)", object: "Pod default/p", field: "spec.priority", message: "must be an integer" },
      { document: "other.yaml", object: "", field: "", message: "invalid YAML: line 11 column 1" },
    ],
  },
};

describe("upload errors", () => {
  it("shows each problem under its document and object, with the field", async () => {
    const fetchMock = vi.fn().mockResolvedValue(jsonResponse(400, refused));
    vi.stubGlobal("fetch", fetchMock);
    const user = userEvent.setup();
    const onUploaded = vi.fn();
    render(<UploadForm onUploaded={onUploaded} />);
    await user.upload(screen.getByTestId("file-input"), new File(["kind: Node"], "cluster.yaml", { type: "application/yaml" }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("4 problems in 3 documents");
    const list = within(alert).getByRole("list", { name: "Upload problems" });
    const docs = within(list).getAllByRole("listitem").filter((li) => li.parentElement === list);
    expect(docs.map((d) => d.querySelector("strong")?.textContent)).toEqual(["cluster.yaml (document 1)", "cluster.yaml (document 2)", "other.yaml"]);
    expect(docs[1]).toHaveTextContent("Pod default/p");
    expect(within(docs[1]).getByText("spec.containers[0].resources.requests.memory")).toBeInTheDocument();
    expect(docs[1]).toHaveTextContent("must be an integer");
    expect(docs[2]).toHaveTextContent("invalid YAML: line 11 column 1");
    expect(onUploaded).not.toHaveBeenCalled();
    const [url, init] = fetchMock.mock.calls[0];
    expect(url).toBe("/api/v1/snapshots/");
    expect(init.method).toBe("POST");
    expect((init.body as FormData).get("file")).toBeInstanceOf(File);
  });

  it("reports a new snapshot and one already stored", async () => {
    const snap = { id: "s1", name: "x" };
    vi.stubGlobal("fetch", vi.fn().mockResolvedValueOnce(jsonResponse(201, snap)).mockResolvedValueOnce(jsonResponse(200, snap)));
    const user = userEvent.setup();
    const onUploaded = vi.fn();
    render(<UploadForm onUploaded={onUploaded} />);
    const file = new File(["x"], "c.yaml");
    await user.upload(screen.getByTestId("file-input"), file);
    await vi.waitFor(() => expect(onUploaded).toHaveBeenCalledWith(snap, true));
    await user.upload(screen.getByTestId("file-input"), file);
    await vi.waitFor(() => expect(onUploaded).toHaveBeenLastCalledWith(snap, false));
  });

  it("shows request field errors and configuration problems with their paths", () => {
    render(
      <UploadProblems
        error={new ApiError(400, "invalid_config", "invalid KubeSchedulerConfiguration", {
          problems: ['profiles[0].plugins.score.enabled[0].name: Not found: "Foo": unknown plugin'],
        })}
      />,
    );
    expect(screen.getByText("profiles[0].plugins.score.enabled[0].name")).toBeInTheDocument();
    expect(screen.getByRole("alert")).toHaveTextContent('Not found: "Foo": unknown plugin');
  });

  it("falls back to the message for a network failure", () => {
    render(<UploadProblems error={new ApiError(0, "network", "The server could not be reached.")} />);
    expect(screen.getByRole("alert")).toHaveTextContent("The server could not be reached.");
  });
});

describe("uploads of real size (202: read on the server)", () => {
  const base = { id: "big", name: "prod", size_bytes: 40_000_000, upload_name: "prod.json.gz" };
  const progress = (read: number, objects: number) => ({ bytesRead: read, bytesTotal: 40_000_000, objectsParsed: objects });

  it("shows the bytes read and objects parsed until the snapshot is ready", async () => {
    const ready = { ...base, status: "ready", progress: progress(40_000_000, 155_000) };
    const fetchMock = vi
      .fn()
      .mockResolvedValueOnce(jsonResponse(202, { ...base, status: "pending", progress: progress(0, 0) }))
      .mockResolvedValueOnce(jsonResponse(200, { ...base, status: "parsing", progress: progress(12_582_912, 52_300) }))
      .mockResolvedValueOnce(jsonResponse(200, ready));
    vi.stubGlobal("fetch", fetchMock);
    const user = userEvent.setup();
    const onUploaded = vi.fn();
    render(<UploadForm onUploaded={onUploaded} />);
    await user.upload(screen.getByTestId("file-input"), new File(["x"], "prod.json.gz"));
    const status = await screen.findByTestId("upload-progress");
    await vi.waitFor(() => expect(status).toHaveTextContent("Reading prod.json.gz — 12 MB of 38.1 MB read, 52,300 objects"));
    expect(within(status).getByRole("progressbar")).toHaveAttribute("aria-valuenow", "31");
    await vi.waitFor(() => expect(onUploaded).toHaveBeenCalledWith(ready, true), { timeout: 3000 });
    expect(fetchMock.mock.calls.map((c) => c[0])).toEqual(["/api/v1/snapshots/", "/api/v1/snapshots/big/", "/api/v1/snapshots/big/"]);
  });

  it("lists the problems of an upload that failed", async () => {
    const failed = {
      ...base,
      status: "failed",
      progress: progress(20_000_000, 0),
      duplicate_of: null,
      error: {
        message: "invalid upload: prod.json.gz: truncated gzip stream",
        problems: [{ document: "prod.json.gz", object: "", field: "", message: "truncated gzip stream: the upload is cut short" }],
      },
    };
    const fetchMock = vi
      .fn()
      .mockResolvedValueOnce(jsonResponse(202, { ...base, status: "pending" }))
      .mockResolvedValueOnce(jsonResponse(200, failed))
      .mockResolvedValueOnce(new Response(null, { status: 204 }));
    vi.stubGlobal("fetch", fetchMock);
    const user = userEvent.setup();
    const onUploaded = vi.fn();
    render(<UploadForm onUploaded={onUploaded} />);
    await user.upload(screen.getByTestId("file-input"), new File(["x"], "prod.json.gz"));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("1 problem in 1 document. Nothing was stored.");
    expect(alert).toHaveTextContent("truncated gzip stream: the upload is cut short");
    expect(onUploaded).not.toHaveBeenCalled();
    // the failed snapshot holds nothing: not kept once its problems are on screen
    expect(fetchMock.mock.calls[2][0]).toBe("/api/v1/snapshots/big/");
    expect(fetchMock.mock.calls[2][1].method).toBe("DELETE");
  });

  it("opens the snapshot already holding the same cluster", async () => {
    const dup = { ...base, status: "failed", duplicate_of: "old", error: { message: "already stored", problems: [] } };
    const fetchMock = vi
      .fn()
      .mockResolvedValueOnce(jsonResponse(202, { ...base, status: "pending" }))
      .mockResolvedValueOnce(jsonResponse(200, dup))
      .mockResolvedValueOnce(new Response(null, { status: 204 }));
    vi.stubGlobal("fetch", fetchMock);
    const user = userEvent.setup();
    const onUploaded = vi.fn();
    render(<UploadForm onUploaded={onUploaded} />);
    await user.upload(screen.getByTestId("file-input"), new File(["x"], "prod.json.gz"));
    await vi.waitFor(() => expect(onUploaded).toHaveBeenCalledWith({ ...dup, id: "old" }, false));
    expect(fetchMock.mock.calls[2][0]).toBe("/api/v1/snapshots/big/");
    expect(fetchMock.mock.calls[2][1].method).toBe("DELETE");
  });
});
