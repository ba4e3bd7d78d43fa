import { Link } from "react-router-dom";
import type { Explanation, Fix, NodeComparison, PluginDiff } from "../api/types";
import { CodeBadge, ResultBadge } from "./Badges";
import { ExplainChart } from "./ExplainChart";

const VERDICTS: Record<string, { cls: string; icon: string; text: string }> = {
  fits: { cls: "blue", icon: "✓", text: "fits (checked)" },
  partly: { cls: "orange", icon: "◐", text: "fits some nodes (checked)" },
  "still-fails": { cls: "vermillion", icon: "✕", text: "not enough alone" },
  unchecked: { cls: "grey", icon: "?", text: "not checked" },
  "no-suggestion": { cls: "grey", icon: "–", text: "no change found" },
};

function FixVerdict({ verdict }: { verdict: string }) {
  const v = VERDICTS[verdict] ?? { cls: "grey", icon: "?", text: verdict };
  return (
    <span className={`badge ${v.cls}`} data-verdict={verdict}>
      <span className="icon" aria-hidden="true">
        {v.icon}
      </span>
      {v.text}
    </span>
  );
}

function names(list: string[], max = 12): string {
  return list.length <= max ? list.join(", ") : `${list.slice(0, max).join(", ")} and ${list.length - max} more`;
}

/** "gen-1a-0 beat gen-1b-1 by 6 points: NodeResourcesFit +5, ..." */
export function comparisonWords(winner: string, c: NodeComparison): string[] {
  const out: string[] = [];
  const plugins = Object.entries(c.plugins ?? {}) as [string, PluginDiff][];
  const wTotal = c.total !== undefined && c.total !== null && c.margin !== undefined && c.margin !== null ? c.total + c.margin : null;
  if (c.tied) {
    out.push(
      `${winner} and ${c.node} have the same total score${wTotal !== null ? ` (${wTotal})` : ""}: ${winner} wins because it comes first in snapshot order.`,
    );
  } else if (c.margin !== undefined && c.margin !== null) {
    out.push(`${winner} scored ${wTotal ?? "?"} and ${c.node} ${c.total ?? "?"}: ${winner} is ahead by ${c.margin} point${c.margin === 1 ? "" : "s"}.`);
  }
  const ahead = plugins.filter(([, d]) => d.difference > 0).sort((a, b) => b[1].difference - a[1].difference);
  const behind = plugins.filter(([, d]) => d.difference < 0).sort((a, b) => a[1].difference - b[1].difference);
  const equal = plugins.filter(([, d]) => d.difference === 0).map(([p]) => p);
  for (const [p, d] of ahead) {
    out.push(
      `${p} gave ${winner} ${d.difference} more (${d.winner} against ${d.other}, weight ${d.weight}; raw ${d.winnerRaw} against ${d.otherRaw}).`,
    );
  }
  for (const [p, d] of behind) {
    out.push(
      `${p} favoured ${c.node} by ${-d.difference} (${d.other} against ${d.winner}, weight ${d.weight}; raw ${d.otherRaw} against ${d.winnerRaw}).`,
    );
  }
  if (equal.length) out.push(`Equal on ${equal.join(", ")}.`);
  return out;
}

function ComparisonBlock({ winner, c, title }: { winner: string; c: NodeComparison; title: string }) {
  if (!c.feasible) {
    return (
      <div className="panel" data-testid="comparison" aria-label={title}>
        <h3>
          {title}: {c.node}
        </h3>
        {c.rejected ? (
          <p>
            {c.node} was rejected by <strong>{c.rejected.plugin || "a PreFilter plugin"}</strong> <CodeBadge code={c.rejected.code} />:{" "}
            {c.rejected.reasons.join("; ")}
          </p>
        ) : (
          <p>{c.node} was not evaluated in this cycle.</p>
        )}
        {c.fixes?.length ? (
          <>
            <div className="small muted">What would make it fit there:</div>
            <ul>
              {c.fixes.map((f, k) => (
                <li key={k}>{f}</li>
              ))}
            </ul>
          </>
        ) : null}
      </div>
    );
  }
  const words = comparisonWords(winner, c);
  return (
    <div className="panel" data-testid="comparison" aria-label={title}>
      <h3>
        {title}: {winner} against {c.node}
      </h3>
      <ul className="explain-words" style={{ margin: "0 0 8px", paddingLeft: 18 }}>
        {words.map((w, k) => (
          <li key={k}>{w}</li>
        ))}
      </ul>
      {c.plugins && Object.keys(c.plugins).length ? <ExplainChart plugins={c.plugins} winner={winner} other={c.node} /> : null}
    </div>
  );
}

export function FixTree({ fix, depth = 0 }: { fix: Fix; depth?: number }) {
  return (
    <div className={depth ? undefined : "fix"} data-testid="fix">
      <div className="row" style={{ gap: 6 }}>
        <strong>{fix.plugin || "PreFilter"}</strong>
        <span className="small muted">
          {fix.nodes.length} node{fix.nodes.length === 1 ? "" : "s"}
        </span>
        <FixVerdict verdict={fix.verdict} />
        {fix.feasibleNodesAfter !== undefined ? (
          <span className="small muted">
            → {fix.feasibleNodesAfter} feasible node{fix.feasibleNodesAfter === 1 ? "" : "s"} after the change
            {fix.moreFeasibleNodes ? ` (+${fix.moreFeasibleNodes})` : ""}
          </span>
        ) : null}
      </div>
      <p style={{ margin: "4px 0" }}>{fix.diagnosis}</p>
      {fix.change ? (
        <p style={{ margin: "4px 0" }}>
          <span className={`badge ${fix.change.scope === "pod" ? "green" : "grey"}`}>{fix.change.scope === "pod" ? "change the pod" : "change the node"}</span>{" "}
          {fix.change.description}
        </p>
      ) : null}
      <div className="node-list">{names(fix.nodes)}</div>
      {fix.passes?.length && fix.passes.length < fix.nodes.length ? (
        <div className="small">passes then on: {names(fix.passes)}</div>
      ) : null}
      {fix.unchecked?.length ? <div className="small muted">not checked on: {names(fix.unchecked)}</div> : null}
      {(fix.thenFails ?? []).map((t, k) => (
        <div className="fix-next" key={k}>
          <div className="small">
            With this change alone, {t.nodes.length} node{t.nodes.length === 1 ? "" : "s"} then fail{t.nodes.length === 1 ? "s" : ""}{" "}
            <strong>{t.plugin}</strong> ({t.reasons.join("; ")}). Next:
          </div>
          {t.next.length ? t.next.map((f, j) => <FixTree key={j} fix={f} depth={depth + 1} />) : <div className="small muted">no further change found</div>}
        </div>
      ))}
    </div>
  );
}

export function ExplainView({
  ex,
  replayId,
  cycleHref,
  titles,
}: {
  ex: Explanation;
  replayId: string;
  /** default: the replay's cycle */
  cycleHref?: string;
  /** A title for the comparison with some nodes (default: "Compared", or "Why not" without a winner). */
  titles?: Record<string, string>;
}) {
  const winner = ex.winner;
  const sched = ex.scheduler;
  return (
    <div className="stack">
      <section className="panel" aria-labelledby="ex-title">
        <div className="row">
          <h2 id="ex-title" style={{ margin: 0 }}>
            <span className="mono">{ex.pod}</span>
          </h2>
          <ResultBadge result={ex.result} />
          <span className="small muted">
            cycle{" "}
            <Link to={cycleHref ?? `/replays/${replayId}/cycles/${ex.seq}`}>{ex.seq}</Link>{" "}
            · profile {ex.profile ?? "–"} · {ex.nodes.feasible} of {ex.nodes.total} nodes feasible, {ex.nodes.rejected} rejected
          </span>
        </div>
        {ex.summary ? (
          <p className="ex-summary" data-testid="summary" style={{ margin: "8px 0 0", fontSize: 15 }}>
            <strong>{ex.summary}</strong>
          </p>
        ) : null}
        {ex.message ? <div className="message" style={{ marginTop: 8 }}>{ex.message}</div> : null}
        {ex.error ? <div className="message" style={{ marginTop: 8 }}>{ex.error}</div> : null}
        {sched && sched.result && !sched.allNodes ? (
          <p className="small muted" style={{ marginTop: 6 }}>
            With its node sampling the scheduler evaluated {sched.evaluatedNodes} nodes: {sched.result}
            {sched.selectedNode ? ` on ${sched.selectedNode}` : ""}. This page judges every node.
          </p>
        ) : null}
        {ex.notes.map((n, k) => (
          <p key={k} className="notice small" style={{ marginTop: 6 }}>
            {n}
          </p>
        ))}
      </section>

      {winner ? (
        <section aria-labelledby="why-here">
          <h2 id="why-here">Why {winner.node}?</h2>
          <p>
            {winner.node} had the best total score{winner.total !== null ? ` (${winner.total})` : ""} of the {ex.nodes.feasible} feasible nodes
            {winner.tiedNodes.length > 1 ? `, tied with ${names(winner.tiedNodes.filter((n) => n !== winner.node), 6)}: the first in snapshot order wins` : ""}.
          </p>
          <div className="stack">
            {winner.runnerUp ? (
              <ComparisonBlock winner={winner.node} c={winner.runnerUp} title="Runner-up" />
            ) : ex.nodes.feasible === 1 ? (
              <p className="muted">It was the only feasible node.</p>
            ) : null}
            {ex.compared.map((c) => (
              <ComparisonBlock key={c.node} winner={winner.node} c={c} title={titles?.[c.node] ?? "Compared"} />
            ))}
          </div>
        </section>
      ) : ex.compared.length ? (
        <section className="stack" aria-label="Chosen nodes">
          {ex.compared.map((c) => (
            <ComparisonBlock key={c.node} winner={"the winner"} c={c} title={titles?.[c.node] ?? "Why not"} />
          ))}
        </section>
      ) : null}

      {ex.rejected.length ? (
        <section className="panel" aria-labelledby="rejected-title">
          <h2 id="rejected-title">
            Rejected nodes <span className="muted small">({ex.nodes.rejected})</span>
          </h2>
          <table className="data">
            <thead>
              <tr>
                <th className="num">Nodes</th>
                <th>Plugin</th>
                <th>Status</th>
                <th>Reason</th>
                <th>Which</th>
              </tr>
            </thead>
            <tbody>
              {ex.rejected.map((g, k) => (
                <tr key={k} data-testid="rejected-group">
                  <td className="num">{g.count}</td>
                  <td>{g.plugin || "–"}</td>
                  <td>
                    <CodeBadge code={g.code} />
                  </td>
                  <td>{g.reasons.join("; ")}</td>
                  <td>
                    {g.nodes.length <= 6 ? (
                      <span className="node-list">{g.nodes.join(", ")}</span>
                    ) : (
                      <details>
                        <summary className="small">{g.nodes.length} nodes</summary>
                        <span className="node-list">{g.nodes.join(", ")}</span>
                      </details>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}

      {ex.suggestions.length ? (
        <section className="panel" aria-labelledby="sugg-title">
          <h2 id="sugg-title">What would make it fit: single changes</h2>
          <p className="small muted">
            Ranked by the nodes each makes feasible; among equals, changes that keep what the pod asks for come first (asking for less,
            tolerating a taint), then node changes, then dropping one of the pod&apos;s placement rules, and the smallest change first.
          </p>
          <table className="data">
            <thead>
              <tr>
                <th className="num">Feasible nodes</th>
                <th>Change</th>
                <th>Where</th>
              </tr>
            </thead>
            <tbody>
              {ex.suggestions.map((s, k) => (
                <tr key={k} data-testid="suggestion">
                  <td className="num">{s.feasibleNodes}</td>
                  <td>
                    <span className={`badge ${s.change.scope === "pod" ? "green" : "grey"}`}>{s.change.scope}</span> {s.change.description}
                  </td>
                  <td className="node-list">{s.change.scope === "node" ? `any one of ${names(s.nodes, 5)}` : names(s.nodes, 5)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {ex.suggestionsOmitted ? <p className="small muted">… and {ex.suggestionsOmitted} more.</p> : null}
        </section>
      ) : ex.result === "Unschedulable" && ex.fixes.length ? (
        <p className="warn-box">No single change was found that makes a node feasible.</p>
      ) : null}
      {ex.fixes.length ? (
        <section className="panel" aria-labelledby="fixes-title">
          <h2 id="fixes-title">{ex.suggestions.length ? "Node by node" : "What would make it fit?"}</h2>
          <p className="small muted">
            Every change below was checked by running PreFilter and Filter again with it applied ({ex.checks.run} run
            {ex.checks.run === 1 ? "" : "s"}
            {ex.checks.capped ? `, capped at ${ex.checks.limit}: some changes are unchecked` : ""}).
          </p>
          {ex.fixes.map((f, k) => (
            <FixTree key={k} fix={f} />
          ))}
          {ex.fixesOmitted ? <p className="small muted">… and {ex.fixesOmitted} more diagnoses.</p> : null}
        </section>
      ) : null}

    </div>
  );
}
