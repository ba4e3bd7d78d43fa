import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { ScoreBar, scoreScale } from "./Bars";

const cell = { raw: 7, normalized: 60, weighted: 120 };

function width() {
  return (screen.getByTestId("score-fill") as HTMLElement).style.width;
}

describe("ScoreBar", () => {
  it("weighted: the value is normalized × weight, on a scale of 100 × weight", () => {
    render(<ScoreBar cell={cell} mode="weighted" plugin="P" weight={2} rawMax={10} color="#000" />);
    expect(screen.getByLabelText("P weighted 120")).toHaveTextContent("120");
    expect(width()).toBe("60%");
  });
  it("normalized: on the 0..100 scale whatever the weight", () => {
    render(<ScoreBar cell={cell} mode="normalized" plugin="P" weight={2} rawMax={10} color="#000" />);
    expect(screen.getByLabelText("P normalized 60")).toBeInTheDocument();
    expect(width()).toBe("60%");
  });
  it("raw: against the largest raw value among the nodes", () => {
    render(<ScoreBar cell={cell} mode="raw" plugin="P" weight={2} rawMax={14} color="#000" />);
    expect(screen.getByLabelText("P raw 7")).toBeInTheDocument();
    expect(width()).toBe("50%");
  });
  it("says when a node has no score", () => {
    render(<ScoreBar cell={null} mode="raw" plugin="P" weight={1} rawMax={0} color="#000" />);
    expect(screen.getByLabelText("P: no score")).toHaveTextContent("–");
  });
  it("never divides by zero", () => {
    expect(scoreScale("raw", 1, 0)).toBe(1);
    expect(scoreScale("weighted", 0, 0)).toBe(100);
  });
});
