"""A CI report (``build.build_report``) rendered: JUnit XML, one test case per pending pod, and a
Markdown pull-request comment.

This module imports no Django: the REST API and the command line both call it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from schedviz.engine import KUBERNETES_VERSION
from schedviz.engine.quantity import format_milli_cpu

from .build import (
    MOVED,
    NEWLY_SCHEDULED,
    NEWLY_UNSCHEDULABLE,
    ONLY_IN_A,
    ONLY_IN_B,
    PERCENT_KEYS,
    RESULT_CHANGED,
    UNCHANGED,
    policy_failures,
    split_pod,
)

# ----- JUnit XML ----------------------------------------------------------------------------------------

# Characters XML 1.0 does not allow, even escaped.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(value: object) -> str:
    return _XML_INVALID.sub("\ufffd", "" if value is None else str(value))


def _placement(entry: Mapping[str, Any] | None) -> str:
    if entry is None or entry.get("result") is None:
        return "not replayed"
    if entry.get("node"):
        return f"{entry['result']} on {entry['node']}"
    return str(entry["result"])


def _pod_details(p: Mapping[str, Any]) -> str:
    lines = [f"pod {p['pod']}: {_placement(p)}"]
    if p.get("profile"):
        lines.append(f"profile: {p['profile']}")
    if p.get("total") is not None:
        lines.append(f"winning node total score: {p['total']}")
    if p.get("nominatedNode"):
        lines.append(f"nominated node (preemption): {p['nominatedNode']}")
    if p.get("message"):
        lines.append(f"message: {p['message']}")
    base = p.get("baseline")
    if base is not None:
        lines.append(
            f"baseline: {_placement(base)} ({_CHANGE_LABEL.get(p.get('change') or '', 'unchanged')})"
        )
        if base.get("message") and base.get("message") != p.get("message"):
            lines.append(f"baseline message: {base['message']}")
    return "\n".join(lines)


def to_junit_xml(report: Mapping[str, Any]) -> str:
    """JUnit XML: ``<testsuites>`` with one ``<testsuite>``, one ``<testcase>`` per pending pod.

    ``classname`` is the namespace and ``name`` the pod's name. Unschedulable pods fail
    (``<failure message=...>`` with the scheduler's message), pods whose cycle failed with an error get
    ``<error>``, pods not handled by any profile or gated are ``<skipped>``; scheduled pods pass. The
    summary is in ``<properties>``; a case's details (node, baseline, message) are the text of its
    ``<failure>``/``<error>``, or its ``<system-out>``.
    """
    pods = list(report["pods"])
    headroom = list(report.get("headroom") or [])
    failures = sum(1 for p in pods if p.get("result") == "Unschedulable")
    failures += sum(1 for h in headroom if not h.get("passed"))
    errors = sum(1 for p in pods if p.get("result") == "Error")
    skipped = sum(1 for p in pods if p.get("result") in ("NotHandled", "Gated") or p.get("result") is None)
    counts = {
        "tests": str(len(pods) + len(headroom)),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": str(skipped),
        "time": "0",
    }
    root = ET.Element("testsuites", {"name": "schedviz", **counts})
    snap = report.get("snapshot") or {}
    suite_name = "schedviz report" + (f": {snap['name']}" if snap.get("name") else "")
    suite = ET.SubElement(root, "testsuite", {"name": _xml_text(suite_name), **counts})
    props = ET.SubElement(suite, "properties")
    prop_values: list[tuple[str, object]] = [
        ("kubernetesVersion", report.get("kubernetesVersion")),
        ("hasBaseline", "true" if report.get("hasBaseline") else "false"),
        ("nodes", snap.get("nodes")),
        ("runningPods", snap.get("runningPods")),
    ]
    prop_values += list(report["summary"].items())
    for key, value in prop_values:
        if value is not None:
            ET.SubElement(props, "property", {"name": key, "value": _xml_text(value)})
    for p in pods:
        ns, name = p.get("namespace"), p.get("name")
        if ns is None or name is None:
            ns, name = split_pod(str(p["pod"]))
        case = ET.SubElement(
            suite, "testcase", {"classname": _xml_text(ns), "name": _xml_text(name), "time": "0"}
        )
        result = p.get("result")
        message = _xml_text(p.get("message") or result or "")
        if result == "Unschedulable":
            el = ET.SubElement(case, "failure", {"message": message, "type": "Unschedulable"})
            el.text = _xml_text(_pod_details(p))
        elif result == "Error":
            el = ET.SubElement(case, "error", {"message": message, "type": "Error"})
            el.text = _xml_text(_pod_details(p))
        elif result in ("NotHandled", "Gated") or result is None:
            ET.SubElement(case, "skipped", {"message": _xml_text(f"{result or 'not replayed'}: {message}")})
        if result not in ("Unschedulable", "Error"):  # a failure or error carries the details itself
            out = ET.SubElement(case, "system-out")
            out.text = _xml_text(_pod_details(p))
    for h in headroom:  # one case per --min-headroom check: class "headroom", named by its pod file
        case = ET.SubElement(suite, "testcase", {"classname": "headroom", "name": _xml_text(h["source"]), "time": "0"})
        details = _xml_text(_headroom_details(h))
        if not h.get("passed"):
            el = ET.SubElement(case, "failure", {"message": _xml_text(h.get("message") or ""), "type": "Headroom"})
            el.text = details
        else:
            ET.SubElement(case, "system-out").text = details
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _headroom_details(h: Mapping[str, Any]) -> str:
    zones = ", ".join(f"{z} {n}" for z, n in (h.get("perZone") or {}).items())
    text = f"{h['fits']} of {h['required']} more copies of {h['pod']} fit" + (f" (per zone: {zones})" if zones else "")
    if h.get("message"):
        text += f"\nthe next copy: {h['message']}"
    return text


# ----- Markdown -----------------------------------------------------------------------------------------

MARKER = "<!-- schedviz-report -->"
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&#])")
_NEWLINES = re.compile(r"\r\n|\r|\n")

_CHANGE_LABEL = {
    UNCHANGED: "unchanged",
    MOVED: "moved",
    NEWLY_UNSCHEDULABLE: "newly unschedulable",
    NEWLY_SCHEDULED: "newly scheduled",
    RESULT_CHANGED: "result changed",
    ONLY_IN_A: "only in the baseline",
    ONLY_IN_B: "only in the candidate",
}


def md_escape(value: object) -> str:
    """Text safe in a Markdown table cell: punctuation Markdown would act on is backslash-escaped,
    ``|`` cannot end the cell, newlines become ``<br>``."""
    text = "" if value is None else str(value)
    return "<br>".join(_MD_SPECIAL.sub(r"\\\1", line) for line in _NEWLINES.split(text))


def _row(cells: Iterable[object]) -> str:
    return "| " + " | ".join(md_escape(c) for c in cells) + " |"


def _table(header: Sequence[str], align: str, rows: list[list[object]], max_rows: int) -> list[str]:
    out = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(("---:" if a == "r" else "---") for a in align) + "|",
    ]
    out += [_row(r) for r in rows[:max_rows]]
    if len(rows) > max_rows:
        out.append("")
        out.append(f"… and {len(rows) - max_rows} more (see the JSON report).")
    return out


def _section(title: str, body: list[str], rows: int, collapse_after: int) -> list[str]:
    if rows > collapse_after:
        return [
            f"### {title}",
            "",
            "<details>",
            f"<summary>Show {rows} row{'s' if rows != 1 else ''}</summary>",
            "",
            *body,
            "",
            "</details>",
            "",
        ]
    return [f"### {title}", "", *body, ""]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _mem(n: int) -> str:
    value = float(n)
    for unit in ("", "Ki", "Mi", "Gi", "Ti", "Pi"):
        if abs(value) < 1024 or unit == "Pi":
            return f"{n}" if unit == "" else f"{value:.1f}{unit}"
        value /= 1024
    return str(n)  # pragma: no cover


def _pct(v: object) -> str:
    return "-" if v is None else f"{v}%"


def _cores(milli: int) -> str:
    """Millicores as cores, kubectl-style but decimal: 7900 -> "7.9", 250 -> "0.25", 4000 -> "4"."""
    return format_milli_cpu(milli) if milli % 1000 == 0 else f"{milli / 1000:.3f}".rstrip("0")


def _usage_cell(usage: Mapping[str, Any], alloc: Mapping[str, Any], key: str) -> str:
    if key == "cpuMilli":
        text = f"{_cores(int(usage[key]))} / {_cores(int(alloc[key]))}"
    elif key == "memoryBytes":
        text = f"{_mem(int(usage[key]))} / {_mem(int(alloc[key]))}"
    else:
        text = f"{usage[key]} / {alloc[key]}"
    return f"{text} ({_pct(usage.get(PERCENT_KEYS[key]))})"


def headline(report: Mapping[str, Any]) -> tuple[str, str]:
    """(icon, sentence) summing up the report: ❌ pods cannot be scheduled, ⚠️ placements changed, ✅."""
    s = report["summary"]
    pending = int(s.get("pendingPods") or 0)
    bad = int(s.get("unschedulable") or 0) + int(s.get("errors") or 0)
    changed = int(s.get("changed") or 0)
    if bad:
        text = f"{bad} of {_plural(pending, 'pending pod')} cannot be scheduled"
        base = report.get("baselineSummary")
        if report.get("hasBaseline") and isinstance(base, Mapping):
            text += f" (baseline: {int(base.get('unschedulable') or 0) + int(base.get('errors') or 0)})"
        if changed:
            text += f"; {_plural(changed, 'pod')} placed differently than the baseline"
        return "❌", text
    scheduled = int(s.get("scheduled") or 0) + int(s.get("waiting") or 0)
    text = f"{scheduled} of {_plural(pending, 'pending pod')} scheduled"
    if pending and scheduled == pending:
        text = f"all {_plural(pending, 'pending pod')} scheduled"
    if not pending:
        text = "no pending pods"
    if changed:
        return "⚠️", f"{text}; {_plural(changed, 'pod')} placed differently than the baseline"
    if report.get("hasBaseline"):
        return "✅", f"{text}; no placement changes against the baseline"
    return "✅", text


def to_markdown(
    report: Mapping[str, Any],
    *,
    fail_on: Iterable[str] | None = None,
    collapse_after: int = 10,
    max_rows: int = 100,
) -> str:
    """A pull-request comment: verdict, summary table, changed placements, unschedulable pods, utilisation.

    Tables longer than ``collapse_after`` rows are collapsed in ``<details>``; at most ``max_rows``
    rows are shown per table. With ``fail_on`` the comment states the policy's verdict.
    """
    icon, sentence = headline(report)
    s = report["summary"]
    base = report.get("baselineSummary")
    has_base = bool(report.get("hasBaseline"))
    lines = [MARKER, f"## {icon} SchedViz: {md_escape(sentence)}", ""]
    snap = report.get("snapshot") or {}
    lines.append(
        f"Replayed {_plural(int(snap.get('pendingPods') or s.get('pendingPods') or 0), 'pending pod')} of "
        f"snapshot {md_escape(snap.get('name') or '(unnamed)')} ({_plural(int(snap.get('nodes') or 0), 'node')}, "
        f"{_plural(int(snap.get('runningPods') or 0), 'running pod')}) through kube-scheduler "
        f"{md_escape(report.get('kubernetesVersion', KUBERNETES_VERSION))} with the candidate configuration"
        + (" and the baseline." if has_base else ".")
    )
    lines.append("")
    if fail_on is not None:
        policies = sorted(set(fail_on))
        if policies:
            reasons = policy_failures(report, policies)
            verdict = "**failed**: " + md_escape("; ".join(reasons)) if reasons else "**passed**"
            lines += [f"Policy (fail on {md_escape(', '.join(policies))}): {verdict}", ""]

    # summary table
    labels = [
        ("pendingPods", "pending pods"),
        ("scheduled", "scheduled"),
        ("waiting", "waiting at Permit"),
        ("unschedulable", "unschedulable"),
        ("errors", "errors"),
        ("notHandled", "not handled (no profile)"),
        ("gated", "gated"),
    ]
    header = ["", "candidate", "baseline"] if has_base and base else ["", "candidate"]
    rows: list[list[object]] = []
    for key, label in labels:
        if key == "waiting" and not s.get("waiting") and not (base or {}).get("waiting"):
            continue
        row: list[object] = [label, s.get(key, 0)]
        if has_base and base:
            row.append(base.get(key, 0))
        rows.append(row)
    lines += ["### Summary", "", *_table(header, "l" + "r" * (len(header) - 1), rows, len(rows)), ""]
    if has_base:
        lines.append(
            "Against the baseline: "
            + ", ".join(
                f"{_plural(int(s.get(k) or 0), 'pod')} {label}"
                for k, label in (
                    (MOVED, "moved"),
                    (NEWLY_UNSCHEDULABLE, "newly unschedulable"),
                    (NEWLY_SCHEDULED, "newly scheduled"),
                    (RESULT_CHANGED, "with another result"),
                )
            )
            + "."
        )
        lines.append("")

    headroom = list(report.get("headroom") or [])
    if headroom:
        rows = [
            [
                h["pod"],
                h["required"],
                h["fits"],
                "passed" if h.get("passed") else "failed",
                h.get("message") or "",
            ]
            for h in headroom
        ]
        lines += ["### Headroom", "", *_table(["pod", "required", "fit", "", "the next copy"], "lrrll", rows, max_rows), ""]

    pods = list(report["pods"])
    # changed placements
    if has_base:
        changed = [p for p in pods if p.get("changed")]
        if changed:
            rows = []
            for p in changed:
                b = p.get("baseline") or {}
                rows.append(
                    [
                        p["pod"],
                        _CHANGE_LABEL.get(p.get("change") or "", p.get("change")),
                        _placement(b if b else None),
                        _placement(p),
                        "-" if b.get("total") is None else b["total"],
                        "-" if p.get("total") is None else p["total"],
                    ]
                )
            body = _table(
                ["pod", "change", "baseline", "candidate", "baseline score", "candidate score"],
                "llllrr",
                rows,
                max_rows,
            )
            lines += _section(f"Changed placements ({len(changed)})", body, len(rows), collapse_after)

    # unschedulable pods
    bad = [p for p in pods if p.get("result") in ("Unschedulable", "Error")]
    if bad:
        rows = [[p["pod"], p["result"], p.get("message") or ""] for p in bad]
        body = _table(["pod", "result", "message"], "lll", rows, max_rows)
        lines += _section(f"Pods that cannot be scheduled ({len(bad)})", body, len(rows), collapse_after)

    # not handled / gated
    other = [p for p in pods if p.get("result") in ("NotHandled", "Gated")]
    if other:
        rows = [[p["pod"], p["result"], p.get("message") or ""] for p in other]
        body = _table(["pod", "result", "reason"], "lll", rows, max_rows)
        lines += _section(f"Pods left out of scheduling ({len(other)})", body, len(rows), collapse_after)

    # utilisation
    util = [n for n in report.get("utilization") or [] if n.get("changed")]
    totals = report.get("utilizationTotals")
    if util or totals:
        rows = []
        for n in util:
            rows.append(
                [n["node"]]
                + [
                    _usage_cell(n[when], n["allocatable"], key)
                    for key in ("cpuMilli", "memoryBytes", "pods")
                    for when in ("before", "after")
                ]
            )
        header = [
            "node",
            "CPU before",
            "CPU after",
            "memory before",
            "memory after",
            "pods before",
            "pods after",
        ]
        body = _table(header, "lllllll", rows, max_rows)
        if totals:
            total_row = [f"all {_plural(int(totals.get('nodes') or 0), 'node')}"] + [
                _usage_cell(totals[when], totals["allocatable"], key)
                for key in ("cpuMilli", "memoryBytes", "pods")
                for when in ("before", "after")
            ]
            # the total row goes right after the table rows, before any "… more" note
            insert_at = 2 + min(len(rows), max_rows)
            body.insert(insert_at, _row(total_row))
        title = f"Requested resources on nodes that receive pods ({len(util)})"
        lines += _section(title, body, len(rows) + 1, collapse_after)

    lines.append(
        f"<sub>SchedViz replay of kube-scheduler {md_escape(report.get('kubernetesVersion', ''))}; "
        "requests against allocatable.</sub>"
    )
    return "\n".join(lines) + "\n"
