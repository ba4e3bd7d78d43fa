import { useId, useState } from "react";
import { useSearchParams } from "react-router-dom";

/**
 * The nodes a Why here? page compares the winner with: `node` query parameters, added from the cycle's node
 * names (a name that is not one of them is refused) and removed one by one.
 */
export function NodePicker({ names, fixed = [] }: { names: string[]; /** nodes compared anyway (not removable), with what they are */ fixed?: { node: string; label: string }[] }) {
  const [sp, setSp] = useSearchParams();
  const nodes = sp.getAll("node");
  const [pick, setPick] = useState("");
  const listId = useId();
  const errorId = useId();
  const addNode = (n: string) => {
    const v = n.trim();
    if (!v || nodes.includes(v) || fixed.some((f) => f.node === v)) return;
    const next = new URLSearchParams(sp);
    next.append("node", v);
    setSp(next);
    setPick("");
  };
  const removeNode = (n: string) => {
    const next = new URLSearchParams();
    for (const [k, v] of sp.entries()) if (!(k === "node" && v === n)) next.append(k, v);
    setSp(next);
  };
  const unknown = pick.trim() && names.length > 0 && !names.includes(pick.trim());
  return (
    <form
      className="row"
      onSubmit={(e) => {
        e.preventDefault();
        if (!unknown) addNode(pick);
      }}
    >
      <label className="field">
        <span>Compare with a node</span>
        <input
          type="text"
          list={listId}
          value={pick}
          onChange={(e) => setPick(e.target.value)}
          placeholder="node name"
          aria-describedby={unknown ? errorId : undefined}
          aria-invalid={!!unknown}
          style={{ width: 240 }}
        />
      </label>
      <datalist id={listId}>
        {names.map((n) => (
          <option key={n} value={n} />
        ))}
      </datalist>
      <button type="submit" disabled={!pick.trim() || !!unknown} style={{ alignSelf: "flex-end" }}>
        Add
      </button>
      {fixed.map((f) => (
        <span key={`fixed-${f.node}`} className="badge purple" style={{ alignSelf: "flex-end" }} title="always compared">
          {f.label}: {f.node}
        </span>
      ))}
      {nodes
        .filter((n) => !fixed.some((f) => f.node === n))
        .map((n) => (
          <span key={n} className="badge grey" style={{ alignSelf: "flex-end" }}>
            {n}
            <button type="button" className="linklike small" onClick={() => removeNode(n)} aria-label={`Stop comparing with ${n}`}>
              ✕
            </button>
          </span>
        ))}
      {unknown ? (
        <span id={errorId} className="small" style={{ color: "var(--vermillion-dark)", alignSelf: "flex-end" }}>
          no node of this cycle is called {pick.trim()}
        </span>
      ) : null}
    </form>
  );
}
