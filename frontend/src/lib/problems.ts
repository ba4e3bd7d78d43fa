// Error details from the API, made presentable: upload problems grouped by document and object, config
// problems split into field path and message, and a YAML field path located in the text (best effort).

import type { UploadProblem } from "../api/types";

export interface ObjectGroup {
  object: string;
  problems: { field: string; message: string }[];
}
export interface DocumentGroup {
  document: string;
  objects: ObjectGroup[];
}

export function isUploadProblems(details: unknown): details is UploadProblem[] {
  return (
    Array.isArray(details) &&
    details.every((d) => d && typeof d === "object" && "message" in d && ("document" in d || "field" in d))
  );
}

/** Problems grouped by document, then object, in the order the server listed them. */
export function groupProblems(problems: UploadProblem[]): DocumentGroup[] {
  const docs: DocumentGroup[] = [];
  for (const p of problems) {
    let doc = docs.find((d) => d.document === (p.document || ""));
    if (!doc) {
      doc = { document: p.document || "", objects: [] };
      docs.push(doc);
    }
    let obj = doc.objects.find((o) => o.object === (p.object || ""));
    if (!obj) {
      obj = { object: p.object || "", problems: [] };
      doc.objects.push(obj);
    }
    obj.problems.push({ field: p.field || "", message: p.message });
  }
  return docs;
}

/** DRF validation errors: {"field": ["message", ...]} -> [[field, message]]. */
export function fieldErrors(details: unknown): [string, string][] {
  if (!details || typeof details !== "object" || Array.isArray(details)) return [];
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(details as Record<string, unknown>)) {
    if (k === "problems") continue;
    if (Array.isArray(v)) v.forEach((m) => out.push([k, typeof m === "string" ? m : JSON.stringify(m)]));
    else if (typeof v === "string") out.push([k, v]);
  }
  return out;
}

export interface ConfigProblem {
  path: string;
  message: string;
}

const PATH_RE = /^([A-Za-z_][\w-]*(?:(?:\.[A-Za-z_][\w./-]*)|\[\d+\])*):\s+(.*)$/s;
const QUOTED_PATH_RE = /unknown field "([^"]+)"/;

/** `profiles[0].plugins.score.enabled[1].name: Not found: ...` -> path + message. */
export function parseConfigProblem(text: string): ConfigProblem {
  const q = QUOTED_PATH_RE.exec(text);
  if (q) return { path: q[1], message: text };
  const m = PATH_RE.exec(text);
  if (m && !m[1].includes(" ")) return { path: m[1], message: m[2] };
  return { path: "", message: text };
}

type Seg = string | number;

export function splitPath(path: string): Seg[] {
  const out: Seg[] = [];
  for (const part of path.split(".")) {
    const re = /([^[\]]+)|\[(\d+)\]/g;
    let m: RegExpExecArray | null;
    while ((m = re.exec(part))) out.push(m[1] !== undefined ? m[1] : Number(m[2]));
  }
  return out;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}
function isBlank(line: string): boolean {
  const t = line.trim();
  return !t || t.startsWith("#");
}

/** 1-based line of a field path in a YAML document (best effort; null when it cannot be found). */
export function lineForPath(text: string, path: string): number | null {
  const lines = text.split("\n");
  const segs = splitPath(path);
  if (!segs.length) return null;
  let start = 0;
  let end = lines.length;
  let parentIndent = -1;
  let found: number | null = null;
  for (const seg of segs) {
    if (typeof seg === "string") {
      const esc = seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      const re = new RegExp(`^(\\s*(?:-\\s+)*)(["']?)${esc}\\2\\s*:`);
      let hit = -1;
      let keyIndent = -1;
      for (let i = start; i < end; i++) {
        const m = re.exec(lines[i]);
        if (m && m[1].length > parentIndent) {
          hit = i;
          keyIndent = m[1].length;
          break;
        }
      }
      if (hit < 0) return found;
      found = hit + 1;
      let e = hit + 1;
      while (e < end) {
        const l = lines[e];
        if (!isBlank(l)) {
          const ind = indentOf(l);
          if (ind < keyIndent || (ind === keyIndent && !l.trimStart().startsWith("-"))) break;
        }
        e++;
      }
      start = hit + 1;
      // the key's own line may start a list item ("- name: x"): its siblings follow on the next lines
      end = e;
      parentIndent = keyIndent;
      if (lines[hit].slice(keyIndent).includes(":") && /:\s*\S/.test(lines[hit].slice(keyIndent)) && !/:\s*[|>]/.test(lines[hit])) {
        // a scalar value on the same line: nothing below belongs to it
        end = start;
      }
    } else {
      let dashIndent = Number.POSITIVE_INFINITY;
      for (let i = start; i < end; i++) {
        const l = lines[i];
        if (!isBlank(l) && l.trimStart().startsWith("-")) dashIndent = Math.min(dashIndent, indentOf(l));
      }
      if (!Number.isFinite(dashIndent)) return found;
      let count = -1;
      let hit = -1;
      for (let i = start; i < end; i++) {
        const l = lines[i];
        if (!isBlank(l) && indentOf(l) === dashIndent && l.trimStart().startsWith("-")) {
          count++;
          if (count === seg) {
            hit = i;
            break;
          }
        }
      }
      if (hit < 0) return found;
      found = hit + 1;
      let e = hit + 1;
      while (e < end) {
        const l = lines[e];
        if (!isBlank(l)) {
          const ind = indentOf(l);
          if (ind < dashIndent || (ind === dashIndent && l.trimStart().startsWith("-"))) break;
          if (ind === dashIndent) break;
        }
        e++;
      }
      start = hit;
      end = e;
      parentIndent = dashIndent;
    }
  }
  return found;
}
