// Okabe-Ito first (colour-blind safe), then Paul Tol's muted scheme for plugins beyond eight.
export const PLUGIN_COLORS = [
  "#0072B2",
  "#E69F00",
  "#009E73",
  "#CC79A7",
  "#56B4E9",
  "#D55E00",
  "#8C7A00",
  "#332288",
  "#88CCEE",
  "#44AA99",
  "#882255",
  "#999933",
];

export function pluginColor(index: number): string {
  return PLUGIN_COLORS[((index % PLUGIN_COLORS.length) + PLUGIN_COLORS.length) % PLUGIN_COLORS.length];
}

/** A sequential, colour-blind safe scale (light yellow -> blue -> dark purple) for utilisation 0..1, >1 overcommitted. */
const STOPS: [number, [number, number, number]][] = [
  [0, [250, 250, 235]],
  [0.25, [199, 233, 180]],
  [0.5, [65, 182, 196]],
  [0.75, [34, 94, 168]],
  [1, [37, 30, 90]],
];

export function heatColor(v: number): [number, number, number] {
  if (!Number.isFinite(v) || v < 0) return [238, 240, 243];
  if (v > 1.0001) return [213, 94, 0]; // over allocatable: vermillion
  for (let i = 1; i < STOPS.length; i++) {
    const [x1, c1] = STOPS[i];
    if (v <= x1) {
      const [x0, c0] = STOPS[i - 1];
      const t = (v - x0) / (x1 - x0);
      return [0, 1, 2].map((k) => Math.round(c0[k] + (c1[k] - c0[k]) * t)) as [number, number, number];
    }
  }
  return STOPS[STOPS.length - 1][1];
}

export function heatGradientCss(): string {
  return `linear-gradient(to right, ${STOPS.map(([x, c]) => `rgb(${c.join(",")}) ${x * 100}%`).join(", ")})`;
}

/** Short column labels for the in-tree score plugins (the full name stays in the title). */
const SHORT: Record<string, string> = {
  NodeResourcesFit: "Fit",
  NodeResourcesBalancedAllocation: "Balanced",
  TaintToleration: "Taints",
  ImageLocality: "Image",
  DynamicResources: "DRA",
  InterPodAffinity: "PodAffinity",
  PodTopologySpread: "Spread",
  NodeAffinity: "NodeAff",
  VolumeBinding: "Volumes",
};

export function shortPluginName(name: string): string {
  return SHORT[name] ?? name;
}
