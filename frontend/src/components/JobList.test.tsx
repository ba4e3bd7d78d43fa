import { act, render, screen, within } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";
import { anyActive, isActive, type JobColumn, JobLink, JobList, usePolling } from "./JobList";

interface Item {
  id: string;
  name: string;
  status: string;
  note: string;
}

const columns: JobColumn<Item>[] = [
  { header: "Job", cell: (j) => <JobLink job={j} base="/jobs" /> },
  { header: "Note", className: "small", cell: (j) => j.note },
];

function state(data: Item[] | undefined, error?: Error) {
  return { data, error, loading: data === undefined, reload: () => undefined };
}

describe("JobList", () => {
  it("lists the jobs, a row each and a cell a column, linking to each job's page", () => {
    render(
      <MemoryRouter>
        <JobList
          state={state([
            { id: "0123456789", name: "", status: "queued", note: "first" },
            { id: "b", name: "second job", status: "succeeded", note: "second" },
          ])}
          label="Loading jobs…"
          empty="No job."
          columns={columns}
        />
      </MemoryRouter>,
    );
    expect(screen.getAllByRole("columnheader").map((h) => h.textContent)).toEqual(["Job", "Note"]);
    const rows = screen.getAllByRole("row").slice(1);
    expect(rows).toHaveLength(2);
    expect(within(rows[0]).getByRole("link", { name: "01234567" })).toHaveAttribute("href", "/jobs/0123456789");
    expect(within(rows[1]).getByRole("link", { name: "second job" })).toHaveAttribute("href", "/jobs/b");
    const note = within(rows[1]).getByText("second");
    expect(note.tagName).toBe("TD");
    expect(note).toHaveClass("small");
    expect(screen.queryByText("No job.")).toBeNull();
  });

  it("says so when there is no job, and shows the loading and the error", () => {
    const { rerender } = render(
      <MemoryRouter>
        <JobList state={state(undefined)} label="Loading jobs…" empty="No job." columns={columns} />
      </MemoryRouter>,
    );
    expect(screen.getByRole("status")).toHaveTextContent("Loading jobs…");
    rerender(
      <MemoryRouter>
        <JobList state={state([])} label="Loading jobs…" empty="No job." columns={columns} />
      </MemoryRouter>,
    );
    expect(screen.getByText("No job.")).toBeInTheDocument();
    expect(screen.queryByRole("table")).toBeNull();
    rerender(
      <MemoryRouter>
        <JobList state={state(undefined, new Error("down"))} label="Loading jobs…" empty="No job." columns={columns} />
      </MemoryRouter>,
    );
    expect(screen.getByRole("alert")).toHaveTextContent("down");
  });
});

describe("active jobs", () => {
  it("are the queued and the running ones", () => {
    expect(["queued", "running", "succeeded", "failed", "cancelled"].map((status) => isActive({ status }))).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(anyActive(undefined)).toBe(false);
    expect(anyActive([{ status: "failed" }, { status: "running" }])).toBe(true);
    expect(anyActive([{ status: "succeeded" }])).toBe(false);
  });
});

describe("usePolling", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function Poller({ poll, reload }: { poll: boolean; reload: () => void }) {
    usePolling(poll, reload, 1000);
    return null;
  }

  it("reloads every period while asked to, and stops when no longer", () => {
    vi.useFakeTimers();
    const reload = vi.fn();
    const { rerender, unmount } = render(<Poller poll={false} reload={reload} />);
    act(() => vi.advanceTimersByTime(5000));
    expect(reload).not.toHaveBeenCalled();
    rerender(<Poller poll reload={reload} />);
    act(() => vi.advanceTimersByTime(2500));
    expect(reload).toHaveBeenCalledTimes(2);
    rerender(<Poller poll={false} reload={reload} />);
    act(() => vi.advanceTimersByTime(5000));
    expect(reload).toHaveBeenCalledTimes(2);
    rerender(<Poller poll reload={reload} />);
    unmount();
    act(() => vi.advanceTimersByTime(5000));
    expect(reload).toHaveBeenCalledTimes(2);
  });
});
