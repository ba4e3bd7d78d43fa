// Quantities in the scheduler's units (cpu millicores, memory bytes, the rest whole units) as people read them.

const BINARY: [string, number][] = [
  ["Ti", 2 ** 40],
  ["Gi", 2 ** 30],
  ["Mi", 2 ** 20],
  ["Ki", 2 ** 10],
];

function trim(n: number, digits: number): string {
  return n.toFixed(digits).replace(/\.?0+$/, "");
}

export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return "–";
  const sign = n < 0 ? "-" : "";
  const a = Math.abs(n);
  for (const [unit, size] of BINARY) {
    if (a >= size) return `${sign}${trim(a / size, a / size >= 100 ? 0 : 1)}${unit}`;
  }
  return `${sign}${a}B`;
}

const GROUPED = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });

export function formatCpu(milli: number): string {
  if (!Number.isFinite(milli)) return "–";
  if (Math.abs(milli) < 1000 && milli % 1000 !== 0) return `${milli}m`;
  // a cluster's totals run to hundreds of thousands of cores: grouped by thousands
  if (Math.abs(milli) >= 1_000_000) return GROUPED.format(milli / 1000);
  return trim(milli / 1000, 2);
}

export function isByteResource(resource: string): boolean {
  return resource === "memory" || resource === "ephemeral-storage" || resource.startsWith("hugepages-");
}

export function formatAmount(resource: string, value: number): string {
  if (resource === "cpu") return formatCpu(value);
  if (isByteResource(resource)) return formatBytes(value);
  return String(value);
}

export function resourceLabel(resource: string): string {
  if (resource === "cpu") return "CPU";
  if (resource === "memory") return "Memory";
  if (resource === "pods") return "Pods";
  if (resource === "ephemeral-storage") return "Ephemeral storage";
  return resource;
}

export function percent(part: number, whole: number): number | null {
  if (!whole || whole <= 0) return null;
  return (part / whole) * 100;
}

export function formatPercent(p: number | null, digits = 0): string {
  if (p === null || !Number.isFinite(p)) return "–";
  return `${p.toFixed(digits)}%`;
}

export function formatMicros(us: number): string {
  if (!Number.isFinite(us)) return "–";
  if (us < 1000) return `${Math.round(us)}µs`;
  if (us < 1_000_000) return `${trim(us / 1000, us < 10_000 ? 2 : 1)}ms`;
  return `${trim(us / 1_000_000, 2)}s`;
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return "–";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function formatDuration(startIso: string | null | undefined, endIso: string | null | undefined): string {
  if (!startIso || !endIso) return "–";
  const ms = new Date(endIso).getTime() - new Date(startIso).getTime();
  if (!Number.isFinite(ms) || ms < 0) return "–";
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${trim(ms / 1000, 1)}s`;
  return `${Math.floor(ms / 60_000)}m ${Math.round((ms % 60_000) / 1000)}s`;
}

export function plural(n: number, one: string, many?: string): string {
  return `${n.toLocaleString()} ${n === 1 ? one : (many ?? `${one}s`)}`;
}

export function shortId(id: string): string {
  return id.slice(0, 8);
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${trim(bytes / 1024, 1)} KB`;
  return `${trim(bytes / 1024 / 1024, 1)} MB`;
}
