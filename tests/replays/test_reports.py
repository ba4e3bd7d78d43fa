"""CI reports: POST /api/v1/reports/ (sync and async), polling, formats, and `schedviz report --server`."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from schedviz.accounts.models import ApiToken
from schedviz.cli import main
from schedviz.engine.errors import SchedVizError
from schedviz.replays import reporting, tasks
from schedviz.replays.models import Report
from schedviz.reports.client import ReportClient
from tests.webfixtures import cluster_yaml, error_of

from .test_replays import MOST_ALLOCATED

BASELINE = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def upload_file(name: str, text: str) -> io.BytesIO:
    f = io.BytesIO(text.encode())
    f.name = name
    return f


def report_form(**extra: Any) -> dict[str, Any]:
    return {
        "snapshot": upload_file("cluster.yaml", cluster_yaml()),
        "config": upload_file("candidate.yaml", yaml.safe_dump(MOST_ALLOCATED)),
        "baseline": upload_file("baseline.yaml", yaml.safe_dump(BASELINE)),
        **extra,
    }


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Reports are queued, not run: the test runs them (as a worker would) with ``run_queued``."""
    ids: list[str] = []
    monkeypatch.setattr(tasks, "dispatch_report", lambda rid: ids.append(str(rid)))
    return ids


def run_queued(ids: list[str]) -> None:
    while ids:
        reporting.run_report(ids.pop(0))


def test_sync_report_with_baseline(api: APIClient) -> None:
    r = api.post("/api/v1/reports/", report_form(wait="10"), format="multipart")
    assert r.status_code == 200, r.content
    rep = r.json()
    assert rep["kind"] == "SchedulingReport" and rep["hasBaseline"] is True
    web = next(p for p in rep["pods"] if p["pod"] == "default/web")
    assert (web["node"], web["baseline"]["node"], web["change"]) == ("small", "large", "moved")
    huge = next(p for p in rep["pods"] if p["pod"] == "default/huge")
    assert huge["result"] == "Unschedulable" and huge["change"] == "unchanged"
    assert rep["summary"]["moved"] == 1 and rep["summary"]["unschedulable"] == 1
    # the same call for a pipeline that wants JUnit XML or Markdown straight away
    xml = api.post("/api/v1/reports/?format=junit", report_form(), format="multipart")
    assert xml.status_code == 200 and xml["Content-Type"].startswith("application/xml")
    suite = ET.fromstring(xml.content)
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    md = api.post("/api/v1/reports/?format=markdown", report_form(), format="multipart")
    assert md.status_code == 200 and md["Content-Type"].startswith("text/markdown")
    assert "default/web" in md.content.decode() or "web" in md.content.decode()


def test_existing_snapshot_and_no_baseline(api: APIClient, upload: Callable[..., dict[str, Any]]) -> None:
    snap = upload()
    form = {"snapshot_id": snap["id"], "config": upload_file("c.yaml", json.dumps(MOST_ALLOCATED))}
    rep = api.post("/api/v1/reports/", form, format="multipart").json()
    assert rep["hasBaseline"] is False and rep["changes"] is None
    assert next(p for p in rep["pods"] if p["pod"] == "default/web")["node"] == "small"
    # without a config: the snapshot's own (here the default one)
    rep = api.post("/api/v1/reports/", {"snapshot_id": snap["id"]}, format="multipart").json()
    assert next(p for p in rep["pods"] if p["pod"] == "default/web")["node"] == "large"


def test_async_report_is_polled_then_rendered(api: APIClient, queued: list[str]) -> None:
    r = api.post("/api/v1/reports/", report_form(wait="0"), format="multipart")
    assert r.status_code == 202, r.content
    job = r.json()
    assert job["status"] == "queued" and job["report"] is None and job["error"] is None
    assert job["url"].endswith(f"/api/v1/reports/{job['id']}/") and r["Retry-After"] == "1"
    assert queued == [job["id"]]
    poll = api.get(f"/api/v1/reports/{job['id']}/")
    assert poll.json()["status"] == "queued" and poll["Retry-After"] == "1"
    err = error_of(api.get(f"/api/v1/reports/{job['id']}/?format=junit"), 409)
    assert "queued" in err["message"]
    run_queued(queued)
    done = api.get(f"/api/v1/reports/{job['id']}/")
    assert "Retry-After" not in done
    body = done.json()
    assert body["status"] == "succeeded" and body["report"]["kind"] == "SchedulingReport"
    xml = api.get(f"/api/v1/reports/{job['id']}/?format=junit")
    assert xml.status_code == 200 and ET.fromstring(xml.content).tag == "testsuites"
    md = api.get(f"/api/v1/reports/{job['id']}/?format=markdown")
    assert md.status_code == 200 and md.content.decode().startswith("<!-- schedviz-report -->")


def test_failed_report(api: APIClient, monkeypatch: pytest.MonkeyPatch, queued: list[str]) -> None:
    import schedviz.reports

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise SchedVizError("the replay could not be built")

    monkeypatch.setattr(schedviz.reports, "build_report", boom)
    job = api.post("/api/v1/reports/", report_form(wait="0"), format="multipart").json()
    run_queued(queued)
    body = api.get(f"/api/v1/reports/{job['id']}/").json()
    assert body["status"] == "failed" and body["error"] == "the replay could not be built"
    error_of(api.get(f"/api/v1/reports/{job['id']}/?format=markdown"), 409)
    # synchronously: 422 with the reason and the report's id
    monkeypatch.setattr(tasks, "dispatch_report", lambda rid: reporting.run_report(rid))
    err = error_of(api.post("/api/v1/reports/", report_form(wait="5"), format="multipart"), 422)
    assert err["code"] == "report_failed" and "could not be built" in err["message"]
    assert Report.objects.get(pk=err["details"]["id"]).status == "failed"


# ----- the command-line client against a live server ---------------------------------------------------


@pytest.fixture
def cli_files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, text in (
        ("cluster.yaml", cluster_yaml()),
        ("candidate.yaml", yaml.safe_dump(MOST_ALLOCATED)),
        ("baseline.yaml", yaml.safe_dump(BASELINE)),
    ):
        (tmp_path / name).write_text(text)
        out[name] = tmp_path / name
    return out


def cli_args(files: dict[str, Path], *mode: str) -> list[str]:
    return [
        "report",
        "--snapshot",
        str(files["cluster.yaml"]),
        "--config",
        str(files["candidate.yaml"]),
        "--baseline",
        str(files["baseline.yaml"]),
        *mode,
    ]


def test_schedviz_report_server_end_to_end(
    live_server: Any,
    alice: User,
    cli_files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, token = ApiToken.issue(alice, "ci")
    out = tmp_path / "server"
    code = main(
        [
            *cli_args(cli_files, "--server", live_server.url, "--token", token, "--fail-on", "changes"),
            *("--json", f"{out}.json", "--junit", f"{out}.xml", "--markdown", f"{out}.md"),
        ]
    )
    assert code == 1, capsys.readouterr().err  # the candidate moves a pod: the "changes" policy fails
    assert "1 moved" in capsys.readouterr().out
    server = json.loads(Path(f"{out}.json").read_text())
    # the server's report is the one `--local` builds from the same files
    local = tmp_path / "local.json"
    assert main(cli_args(cli_files, "--local", "--json", str(local))) == 0
    expected = json.loads(local.read_text())
    assert server["snapshot"].pop("name") == "cluster.yaml"  # the upload's name; --local names the path
    expected["snapshot"].pop("name")
    assert server == expected
    assert ET.parse(f"{out}.xml").getroot().get("failures") == "1"
    assert "moved" in Path(f"{out}.md").read_text().lower()
    assert Report.objects.get().owner == alice
    # a wrong token: exit 2 with the server's message
    assert main(cli_args(cli_files, "--server", live_server.url, "--token", "svz_wrong", "--json", "-")) == 2
    assert "401" in capsys.readouterr().err


def test_report_client_polls_a_queued_report(
    live_server: Any,
    alice: User,
    cli_files: dict[str, Path],
    queued: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import schedviz.reports.client

    monkeypatch.setattr(schedviz.reports.client, "MAX_WAIT", 0)  # the server answers 202 at once
    _, token = ApiToken.issue(alice, "ci")
    pauses: list[float] = []

    def worker_runs_meanwhile(seconds: float) -> None:  # the client's sleep between polls
        pauses.append(seconds)
        if len(pauses) == 2:  # still queued at the first poll; done at the second
            run_queued(queued)

    client = ReportClient(live_server.url, token, timeout=60, sleep=worker_runs_meanwhile)
    report = client.submit(cli_files["cluster.yaml"], cli_files["candidate.yaml"], cli_files["baseline.yaml"])
    assert report["kind"] == "SchedulingReport" and report["summary"]["moved"] == 1
    assert pauses == [1.0, 1.0]  # the server's Retry-After
    assert Report.objects.get().status == "succeeded"
