"""A report rendered: JUnit XML and the Markdown pull-request comment (schedviz/reports/render.py)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from schedviz.reports import md_escape, to_junit_xml, to_markdown
from tests.engine.builders import node, pod
from tests.reports.test_build import (
    AFFINITY_MSG,
    ONLY_BATCH,
    build_report,
    by_pod,
    config,
    moved_case,
    snapshot,
)

# ----- JUnit XML --------------------------------------------------------------------------------------

SUITE_ATTRS = {
    "name",
    "tests",
    "failures",
    "errors",
    "skipped",
    "time",
    "timestamp",
    "hostname",
    "id",
    "package",
}
CASE_ATTRS = {"name", "classname", "time", "assertions", "file", "line"}
CASE_CHILDREN = ["skipped", "error", "failure", "system-out", "system-err"]


def mixed_report() -> dict[str, Any]:
    nodes = [node("a", cpu="8", labels={"pool": "web"}), node("b", cpu="2", labels={"pool": "batch"})]
    pods = [
        pod("p1", cpu="1", created="2026-01-01T00:00:01Z"),
        pod("p2", cpu="1500m", created="2026-01-01T00:00:02Z"),
        pod("other", namespace="team", schedulerName="x"),
        pod("gated", namespace="team", schedulingGates=[{"name": "wait"}]),
    ]
    return build_report(snapshot(nodes, pods), config(ONLY_BATCH), config(None))


def check_junit_schema(root: ET.Element) -> ET.Element:
    """The common JUnit schema (Jenkins/Ant junit-10.xsd): attributes and child order."""
    assert root.tag == "testsuites"
    suites = list(root)
    assert [s.tag for s in suites] == ["testsuite"]
    suite = suites[0]
    assert set(suite.attrib) <= SUITE_ATTRS and {"name", "tests"} <= set(suite.attrib)
    tags = [c.tag for c in suite]
    assert tags[0] == "properties" and set(tags[1:]) == {"testcase"}
    for prop in suite.find("properties") or []:
        assert prop.tag == "property" and set(prop.attrib) == {"name", "value"}
    for case in suite.findall("testcase"):
        assert set(case.attrib) <= CASE_ATTRS and {"name", "classname"} <= set(case.attrib)
        kids = [c.tag for c in case]
        assert kids == sorted(kids, key=CASE_CHILDREN.index)
        assert sum(1 for k in kids if k in ("skipped", "error", "failure")) <= 1
        for c in case:
            if c.tag in ("failure", "error"):
                assert "message" in c.attrib and "type" in c.attrib
    for attr in ("tests", "failures", "errors", "skipped"):
        assert int(suite.attrib[attr]) >= 0 and root.attrib[attr] == suite.attrib[attr]
    return suite


def test_junit_xml_structure() -> None:
    report = mixed_report()
    text = to_junit_xml(report)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    suite = check_junit_schema(ET.fromstring(text))
    assert suite.attrib["tests"] == "4"
    assert (suite.attrib["failures"], suite.attrib["errors"], suite.attrib["skipped"]) == ("1", "0", "2")
    cases = {(c.attrib["classname"], c.attrib["name"]): c for c in suite.findall("testcase")}
    assert set(cases) == {("default", "p1"), ("default", "p2"), ("team", "other"), ("team", "gated")}
    failure = cases[("default", "p2")].find("failure")
    assert failure is not None
    assert failure.attrib["message"] == by_pod(report)["default/p2"]["message"]
    assert AFFINITY_MSG in failure.attrib["message"]
    assert "baseline: Scheduled on a (newly unschedulable)" in (failure.text or "")
    ok = cases[("default", "p1")]
    assert [c.tag for c in ok] == ["system-out"] and "Scheduled on b" in (ok.find("system-out").text or "")  # type: ignore[union-attr]
    for key in (("team", "other"), ("team", "gated")):
        skipped = cases[key].find("skipped")
        assert skipped is not None and skipped.attrib["message"]
    assert cases[("team", "other")].find("skipped").attrib["message"].startswith("NotHandled: no profile")  # type: ignore[union-attr]
    props = {p.attrib["name"]: p.attrib["value"] for p in suite.find("properties") or []}
    assert props["pendingPods"] == "4" and props["unschedulable"] == "1" and props["moved"] == "1"
    assert props["notHandled"] == "1" and props["gated"] == "1" and props["hasBaseline"] == "true"


def test_junit_escapes_markup_and_drops_invalid_characters() -> None:
    report = mixed_report()
    p2 = next(p for p in report["pods"] if p["pod"] == "default/p2")
    p2["message"] = 'bad <tag> & "quotes"\x01\nsecond line'
    p2["result"] = "Error"
    root = ET.fromstring(to_junit_xml(report))
    suite = check_junit_schema(root)
    err = next(c for c in suite.findall("testcase") if c.attrib["name"] == "p2").find("error")
    assert err is not None and err.attrib["type"] == "Error"
    assert err.attrib["message"] == 'bad <tag> & "quotes"\ufffd\nsecond line'
    assert suite.attrib["errors"] == "1" and suite.attrib["failures"] == "0"


# ----- Markdown -----------------------------------------------------------------------------------------


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_md_escape() -> None:
    assert md_escape("a|b") == "a\\|b"
    assert md_escape("one\ntwo\r\nthree\rfour") == "one<br>two<br>three<br>four"
    assert md_escape("<script> *x* _y_ `z` [l](u) \\ & #") == (
        "\\<script\\> \\*x\\* \\_y\\_ \\`z\\` \\[l\\](u) \\\\ \\& \\#"
    )
    assert md_escape(None) == "" and md_escape(3) == "3"


def test_markdown_comment() -> None:
    report = mixed_report()
    md = to_markdown(report, fail_on={"unschedulable"})
    lines = md.splitlines()
    assert lines[0] == "<!-- schedviz-report -->"
    assert lines[1] == (
        "## ❌ SchedViz: 1 of 4 pending pods cannot be scheduled (baseline: 0); "
        "2 pods placed differently than the baseline"
    )
    assert (
        "Policy (fail on unschedulable): **failed**: unschedulable: 1 pending pod cannot be scheduled" in md
    )
    assert "| unschedulable | 1 | 0 |" in md and "| pending pods | 4 | 4 |" in md
    assert "### Changed placements (2)" in md
    assert "| default/p1 | moved | Scheduled on a | Scheduled on b |" in md
    assert "### Pods that cannot be scheduled (1)" in md
    assert "### Pods left out of scheduling (2)" in md
    util_row = next(line for line in lines if line.startswith("| b |"))
    assert "0 / 2 (0.0%) | 1 / 2 (50.0%)" in util_row and "0 / 110 (0.0%) | 1 / 110 (0.9%)" in util_row
    assert "<details>" not in md  # short lists stay open
    # every table row has as many cell separators as its header
    table_lines = [line for line in lines if line.startswith("|")]
    assert table_lines and all(unescaped_pipes(line) >= 3 for line in table_lines)


def test_markdown_escapes_pipes_and_newlines_in_messages() -> None:
    report = mixed_report()
    p2 = next(p for p in report["pods"] if p["pod"] == "default/p2")
    p2["message"] = "left | right\nnext line"
    md = to_markdown(report)
    row = next(line for line in md.splitlines() if line.startswith("| default/p2 | Unschedulable |"))
    assert row == "| default/p2 | Unschedulable | left \\| right<br>next line |"
    assert unescaped_pipes(row) == 4  # three cells


def test_markdown_headlines_and_collapsed_long_lists() -> None:
    moved = build_report(*moved_case())
    assert to_markdown(moved).splitlines()[1] == (
        "## ⚠️ SchedViz: all 1 pending pod scheduled; 1 pod placed differently than the baseline"
    )
    snap = snapshot([node("a")], [pod("p", cpu="300m", memory="1536Mi")])
    same = to_markdown(build_report(snap, config(None), config(None)), fail_on={"changes"})
    row = next(line for line in same.splitlines() if line.startswith("| a |"))
    assert row == (
        "| a | 0 / 4 (0.0%) | 0.3 / 4 (7.5%) | 0 / 8.0Gi (0.0%) | 1.5Gi / 8.0Gi (18.8%) | 0 / 110 (0.0%) | 1 / 110 (0.9%) |"
    )
    assert (
        same.splitlines()[1]
        == "## ✅ SchedViz: all 1 pending pod scheduled; no placement changes against the baseline"
    )
    assert "Policy (fail on changes): **passed**" in same

    many = snapshot([node("a", cpu="1")], [pod(f"p{i:02}", cpu="2") for i in range(15)])
    report = build_report(many, config(None), None)
    md = to_markdown(report, collapse_after=10, max_rows=12)
    assert md.splitlines()[1] == "## ❌ SchedViz: 15 of 15 pending pods cannot be scheduled"
    section = md[md.index("### Pods that cannot be scheduled (15)") :]
    assert section.split("\n", 3)[2] == "<details>"
    assert "<summary>Show 15 rows</summary>" in section
    assert sum(1 for line in section.splitlines() if line.startswith("| default/p")) == 12
    assert "… and 3 more (see the JSON report)." in section
    assert section.index("</details>") > section.index("… and 3 more")
