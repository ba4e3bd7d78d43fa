// How a replay is told apart from the others in a picker: its name, its configuration and its options.

import type { Replay } from "../api/types";

/** "its configuration" in words: a stored one by name, an inline one, or the snapshot's own / the default. */
export function configText(r: Pick<Replay, "configuration" | "config">, configNames: Record<string, string> = {}): string {
  if (r.configuration) return `configuration “${configNames[r.configuration] || r.configuration.slice(0, 8)}”`;
  if (r.config) return "inline configuration";
  return "snapshot's or default configuration";
}

export function optionsText(r: Pick<Replay, "options">): string {
  const parts = [r.options.allNodes ? "every node" : "sampled"];
  if (r.options.preemption === "dry-run") parts.push("preemption dry-run");
  return parts.join(", ");
}

function shortTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  return d.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

/** One line per replay: name · configuration · options · when (· status unless succeeded). */
export function replayLabel(r: Replay, configNames: Record<string, string> = {}): string {
  const parts = [r.name || r.id.slice(0, 8), configText(r, configNames), optionsText(r), shortTime(r.created)];
  if (r.status !== "succeeded") parts.push(r.status);
  return parts.filter(Boolean).join(" · ");
}
