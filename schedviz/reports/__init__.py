"""CI reports, plain Python (no Django): replay a snapshot under a candidate configuration (and a
baseline), judge the result, render it for CI.

- ``build``: the report (``build_report``), the comparison of two traces (``compare_traces``), the
  ``--fail-on`` policies (``policy_failures``, ``exit_status``) and ``check_report``;
- ``render``: JUnit XML and the Markdown pull-request comment;
- ``client``: ``schedviz report --server``, the reports endpoint's client.

``schedviz report``, the reports endpoint (``schedviz.replays``) and the replays' compare view call
these; the names below are the package's API (``from schedviz.reports import build_report``).
"""

from .build import (
    API_VERSION,
    CHANGE_KINDS,
    FAIL_ON,
    FAIL_ON_CHANGES,
    FAIL_ON_UNSCHEDULABLE,
    FORMAT_VERSION,
    KIND,
    build_report,
    check_report,
    compare_traces,
    exit_status,
    load_inputs,
    policy_failures,
)
from .render import MARKER, headline, md_escape, to_junit_xml, to_markdown

__all__ = [
    "API_VERSION",
    "CHANGE_KINDS",
    "FAIL_ON",
    "FAIL_ON_CHANGES",
    "FAIL_ON_UNSCHEDULABLE",
    "FORMAT_VERSION",
    "KIND",
    "MARKER",
    "build_report",
    "check_report",
    "compare_traces",
    "exit_status",
    "headline",
    "load_inputs",
    "md_escape",
    "policy_failures",
    "to_junit_xml",
    "to_markdown",
]
