import { ApiError } from "../api/client";
import { fieldErrors, groupProblems, isUploadProblems, parseConfigProblem } from "../lib/problems";
import { ErrorView } from "./Feedback";

/** An upload refused by the server: every problem next to its document, object and field. */
export function UploadProblems({ error }: { error: Error }) {
  if (!(error instanceof ApiError)) return <ErrorView error={error} title="Upload failed" />;
  const details = error.details;
  if (isUploadProblems(details) && details.length) {
    const docs = groupProblems(details);
    const count = details.length;
    return (
      <div className="error-box" role="alert">
        <strong>The upload was refused</strong>: {count === 1 ? "1 problem" : `${count} problems`} in{" "}
        {docs.length === 1 ? "1 document" : `${docs.length} documents`}. Nothing was stored.
        <ul className="problems" aria-label="Upload problems">
          {docs.map((d) => (
            <li key={d.document || "(upload)"}>
              <div>
                <strong>{d.document || "The upload"}</strong>
              </div>
              <ul>
                {d.objects.map((o) => (
                  <li key={o.object || "(document)"}>
                    {o.object ? <div className="small">{o.object}</div> : null}
                    <ul>
                      {o.problems.map((p, k) => (
                        <li key={k} className="small">
                          {p.field ? (
                            <span className="where">
                              field <code>{p.field}</code>:{" "}
                            </span>
                          ) : null}
                          {p.message}
                        </li>
                      ))}
                    </ul>
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      </div>
    );
  }
  const fields = fieldErrors(details);
  const problems =
    details && typeof details === "object" && Array.isArray((details as { problems?: unknown }).problems)
      ? ((details as { problems: string[] }).problems ?? [])
      : [];
  if (fields.length || problems.length) {
    return (
      <div className="error-box" role="alert">
        <strong>{error.message}</strong>
        <ul className="problems">
          {fields.map(([f, m], k) => (
            <li key={`f${k}`} className="small">
              <span className="where">
                <code>{f}</code>:{" "}
              </span>
              {m}
            </li>
          ))}
          {problems.map((p, k) => {
            const cp = parseConfigProblem(p);
            return (
              <li key={`p${k}`} className="small">
                {cp.path ? (
                  <span className="where">
                    <code>{cp.path}</code>:{" "}
                  </span>
                ) : null}
                {cp.path ? cp.message : p}
              </li>
            );
          })}
        </ul>
      </div>
    );
  }
  return <ErrorView error={error} title="Upload failed" />;
}
