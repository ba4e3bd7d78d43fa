import { describe, expect, it } from "vitest";
import { formatAmount, formatCpu } from "./format";

describe("formatCpu", () => {
  it("writes millicores under one core and cores above", () => {
    expect(formatCpu(500)).toBe("500m");
    expect(formatCpu(8750)).toBe("8.75");
    expect(formatCpu(40000)).toBe("40");
  });
  it("groups a cluster's totals by thousands", () => {
    expect(formatCpu(156_197_380)).toBe("156,197.38");
    expect(formatCpu(999_990)).toBe("999.99");
    expect(formatCpu(1_000_000)).toBe("1,000");
    expect(formatAmount("cpu", 2_500_500_000)).toBe("2,500,500");
  });
});
