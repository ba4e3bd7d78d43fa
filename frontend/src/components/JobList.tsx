import { useEffect, type ReactNode } from "react";
import { Link } from "react-router-dom";
import { Async, Empty } from "./Feedback";

/** A job the server runs on its worker (a replay, a plan): listed by id, polled while it is under way. */
export interface Job {
  id: string;
  name: string;
  status: string;
}

export interface JobColumn<T> {
  header: string;
  cell: (job: T) => ReactNode;
  className?: string;
}

/** Whether the job is under way: queued or running. */
export function isActive(job: { status: string }): boolean {
  return job.status === "queued" || job.status === "running";
}

/** Whether any of the jobs is under way (the list is then polled). */
export function anyActive(jobs: readonly { status: string }[] | undefined): boolean {
  return (jobs ?? []).some(isActive);
}

/** Calls ``reload`` every ``ms`` while ``poll`` holds. */
export function usePolling(poll: boolean, reload: () => void, ms: number): void {
  useEffect(() => {
    if (!poll) return;
    const t = setInterval(reload, ms);
    return () => clearInterval(t);
  }, [poll, reload, ms]);
}

/** The job's name (or the start of its id) linking to its page under ``base`` (``/replays``, ``/plans``). */
export function JobLink({ job, base }: { job: Job; base: string }) {
  return <Link to={`${base}/${job.id}`}>{job.name || job.id.slice(0, 8)}</Link>;
}

/** A list of jobs as a table, one row a job and one cell a column; ``empty`` when there is none. */
export function JobList<T extends Job>({
  state,
  label,
  empty,
  columns,
}: {
  state: { data: T[] | undefined; error: Error | undefined; loading: boolean; reload: () => void };
  label: string;
  empty: ReactNode;
  columns: JobColumn<T>[];
}) {
  return (
    <Async state={state} label={label}>
      {(items) =>
        items.length === 0 ? (
          <Empty>{empty}</Empty>
        ) : (
          <div className="table-wrap">
            <table className="data">
              <thead>
                <tr>
                  {columns.map((c) => (
                    <th key={c.header}>{c.header}</th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {items.map((job) => (
                  <tr key={job.id}>
                    {columns.map((c) => (
                      <td key={c.header} className={c.className}>
                        {c.cell(job)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      }
    </Async>
  );
}
