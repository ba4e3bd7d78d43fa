"""``schedviz report``: local mode, and server mode against a stub of the reports API on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedviz.cli import main
from schedviz.reports import build_report, load_inputs
from tests.engine.builders import node, pod

TOKEN = "s3cret"


def write(tmp_path: Path, name: str, obj: object) -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(obj))
    return p


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    """A cluster where the candidate (MostAllocated) moves p from b to a, and q cannot be scheduled."""
    cluster = {"kind": "List", "items": [node("a", cpu="4"), node("b", cpu="8"), pod("p", cpu="1")]}
    with_big = {**cluster, "items": [*cluster["items"], pod("q", namespace="jobs", cpu="64")]}
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
                ],
            }
        ],
    }
    base = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    return {
        "snapshot": write(tmp_path, "cluster.yaml", cluster),
        "big": write(tmp_path, "big.yaml", with_big),
        "config": write(tmp_path, "candidate.yaml", cfg),
        "baseline": write(tmp_path, "baseline.yaml", base),
    }


def args(files: dict[str, Path], *extra: str, snapshot: str = "snapshot", baseline: bool = True) -> list[str]:
    out = ["report", "--snapshot", str(files[snapshot]), "--config", str(files["config"])]
    if baseline:
        out += ["--baseline", str(files["baseline"])]
    return out + list(extra)


# ----- local mode ---------------------------------------------------------------------------------------


def test_local_writes_all_outputs(
    tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    junit, md, js = tmp_path / "r.xml", tmp_path / "r.md", tmp_path / "r.json"
    code = main(args(files, "--local", "--junit", str(junit), "--markdown", str(md), "--json", str(js)))
    assert code == 0
    report = json.loads(js.read_text())
    assert report["kind"] == "SchedulingReport"
    assert report["summary"]["moved"] == 1 and report["pods"][0]["node"] == "a"
    suite = ET.fromstring(junit.read_text()).find("testsuite")
    assert suite is not None and suite.attrib["tests"] == "1" and suite.attrib["failures"] == "0"
    assert "### Changed placements (1)" in md.read_text()
    out = capsys.readouterr().out
    assert "schedviz report: 1 pending pod: 1 scheduled, 0 unschedulable" in out
    assert "against the baseline: 1 moved" in out


def test_local_fail_on_policies(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args(files, "--local", "--fail-on", "unschedulable")) == 0
    assert main(args(files, "--local", "--fail-on", "changes")) == 1
    assert "policy failed: changes: 1 pod placed differently than the baseline" in capsys.readouterr().out
    assert main(args(files, "--local", "--fail-on", "unschedulable", snapshot="big", baseline=False)) == 1
    out = capsys.readouterr().out
    assert "jobs/q: Unschedulable: 0/2 nodes are available: 2 Insufficient cpu." in out
    assert "policy failed: unschedulable: 1 pending pod cannot be scheduled" in out


def test_local_json_to_stdout_moves_summary_to_stderr(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args(files, "--local", "--json", "-")) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["summary"]["pendingPods"] == 1
    assert "schedviz report:" in captured.err


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--fail-on", "changes"], "--fail-on changes needs --baseline"),
        (["--json", "-", "--markdown", "-"], "only one of --junit, --markdown and --json"),
        (["--junit", "/nonexistent-dir/r.xml"], "--junit /nonexistent-dir/r.xml: cannot write"),
    ],
)
def test_local_usage_errors_exit_2(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], extra: list[str], fragment: str
) -> None:
    assert main(args(files, "--local", *extra, baseline=False)) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err


def test_local_bad_inputs_exit_2(
    tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.yaml"
    assert main(["report", "--snapshot", str(missing), "--config", str(files["config"]), "--local"]) == 2
    assert f"{missing}: no such file or directory" in capsys.readouterr().err
    bad = write(
        tmp_path, "bad.yaml", {"kind": "KubeSchedulerConfiguration", "profiles": [{"schedulerName": 3}]}
    )
    assert main(["report", "--snapshot", str(files["snapshot"]), "--config", str(bad), "--local"]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml" in err and "invalid KubeSchedulerConfiguration" in err


def test_mode_is_required(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(args(files))
    assert exc.value.code == 2
    assert "one of the arguments --local --server is required" in capsys.readouterr().err


# ----- server mode against a stub ---------------------------------------------------------------------


class Stub:
    """The reports API protocol: POST answers 200 (report), 202 (queued) or an error; GET polls a job."""

    def __init__(self) -> None:
        self.mode = "immediate"  # immediate | queued | failed | invalid | running | elsewhere | html
        self.requests: list[dict[str, Any]] = []
        self.polls = 0
        self.report: dict[str, Any] | None = None
        self.url = ""


def make_handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # silence the test output
            pass

        def send_json(self, status: int, body: object, retry_after: str | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if retry_after is not None:
                self.send_header("Retry-After", retry_after)
            self.end_headers()
            self.wfile.write(data)

        def authorized(self) -> bool:
            if self.headers.get("Authorization") != f"Token {TOKEN}":
                self.send_json(
                    401,
                    {
                        "error": {
                            "code": "authentication_failed",
                            "message": "Invalid token.",
                            "details": None,
                        }
                    },
                )
                return False
            return True

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            msg = BytesParser(policy=email_policy).parsebytes(
                f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + body
            )
            fields: dict[str, Any] = {}
            for part in msg.iter_parts():
                name = str(part.get_param("name", header="content-disposition"))
                payload = part.get_payload(decode=True)
                assert isinstance(payload, bytes)
                fields[name] = (part.get_filename(), payload.decode())
            stub.requests.append(
                {"method": "POST", "path": self.path, "fields": fields, "auth": self.headers["Authorization"]}
            )
            if self.path != "/api/v1/reports/":
                self.send_json(
                    404, {"error": {"code": "not_found", "message": "Not found.", "details": None}}
                )
                return
            if not self.authorized():
                return
            if stub.mode == "invalid":
                self.send_json(
                    400,
                    {
                        "error": {
                            "code": "invalid_config",
                            "message": "invalid KubeSchedulerConfiguration in config",
                            "details": {
                                "field": "config",
                                "problems": ["profiles[0].schedulerName: Required value"],
                            },
                        }
                    },
                )
                return
            if stub.mode == "html":
                data = b"<html>oops</html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            baseline = fields.get("baseline")
            snap, cand, base = load_inputs([fields["snapshot"]], fields["config"], baseline)
            stub.report = build_report(snap, cand, base)
            if stub.mode == "immediate":
                self.send_json(200, stub.report)
                return
            url = (
                "http://other.example/api/v1/reports/r1/"
                if stub.mode == "elsewhere"
                else "/api/v1/reports/r1/"
            )
            self.send_json(
                202, {"id": "r1", "status": "queued", "url": url, "report": None, "error": None}, "0"
            )

        def do_GET(self) -> None:
            stub.requests.append(
                {"method": "GET", "path": self.path, "auth": self.headers.get("Authorization")}
            )
            if not self.authorized():
                return
            if self.path != "/api/v1/reports/r1/":
                self.send_json(
                    404, {"error": {"code": "not_found", "message": "Not found.", "details": None}}
                )
                return
            stub.polls += 1
            if stub.mode == "running" or stub.polls < 2:
                self.send_json(200, {"id": "r1", "status": "running", "report": None, "error": None}, "0.05")
            elif stub.mode == "failed":
                self.send_json(200, {"id": "r1", "status": "failed", "report": None, "error": "worker lost"})
            else:
                self.send_json(200, {"id": "r1", "status": "succeeded", "report": stub.report, "error": None})

    return Handler


@pytest.fixture()
def stub() -> Iterator[Stub]:
    s = Stub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(s))
    s.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield s
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(autouse=True)
def no_env_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCHEDVIZ_TOKEN", raising=False)


def server_args(files: dict[str, Path], stub: Stub, *extra: str, **kw: Any) -> list[str]:
    return args(files, "--server", stub.url, "--token", TOKEN, *extra, **kw)


def test_server_immediate_answer_matches_local(
    tmp_path: Path, files: dict[str, Path], stub: Stub, capsys: pytest.CaptureFixture[str]
) -> None:
    remote, local = tmp_path / "remote.json", tmp_path / "local.json"
    assert main(server_args(files, stub, "--json", str(remote))) == 0
    assert main(args(files, "--local", "--json", str(local))) == 0
    got, want = json.loads(remote.read_text()), json.loads(local.read_text())
    assert got["snapshot"].pop("name") == "cluster.yaml"  # the uploaded file's name
    assert want["snapshot"].pop("name") == str(files["snapshot"])
    assert got == want
    [req] = stub.requests
    assert req["auth"] == f"Token {TOKEN}" and req["path"] == "/api/v1/reports/"
    fields = req["fields"]
    assert set(fields) == {"snapshot", "config", "baseline", "wait"}
    assert fields["snapshot"][0] == "cluster.yaml" and fields["config"][0] == "candidate.yaml"
    assert fields["snapshot"][1] == files["snapshot"].read_text()
    assert fields["wait"] == (None, "30")


def test_server_queued_then_polled(
    files: dict[str, Path], stub: Stub, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.mode = "queued"
    code = main(
        server_args(files, stub, "--fail-on", "unschedulable", "--junit", "-", snapshot="big", baseline=False)
    )
    assert code == 1
    gets = [r for r in stub.requests if r["method"] == "GET"]
    assert [g["path"] for g in gets] == ["/api/v1/reports/r1/"] * 2  # running, then succeeded
    assert all(g["auth"] == f"Token {TOKEN}" for g in gets)
    assert "baseline" not in stub.requests[0]["fields"]
    captured = capsys.readouterr()
    suite = ET.fromstring(captured.out).find("testsuite")
    assert suite is not None and suite.attrib["failures"] == "1"
    assert "policy failed: unschedulable" in captured.err


def test_server_polls_its_own_host_whatever_url_the_job_names(
    files: dict[str, Path], stub: Stub, capsys: pytest.CaptureFixture[str]
) -> None:
    # Behind a proxy Django may build http://internal-host/... URLs: only their path is used.
    stub.mode = "elsewhere"
    assert main(server_args(files, stub, "--fail-on", "changes")) == 1
    gets = [r for r in stub.requests if r["method"] == "GET"]
    assert len(gets) == 2 and all(g["path"] == "/api/v1/reports/r1/" for g in gets)


def test_server_token_from_environment(
    files: dict[str, Path], stub: Stub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SCHEDVIZ_TOKEN", TOKEN)
    assert main(args(files, "--server", stub.url + "/")) == 0
    assert stub.requests[0]["auth"] == f"Token {TOKEN}"


@pytest.mark.parametrize(
    ("mode", "extra", "fragments"),
    [
        ("failed", [], ["report r1 failed on the server: worker lost"]),
        (
            "invalid",
            [],
            [
                "server answered 400 Bad Request",
                "invalid KubeSchedulerConfiguration in config: config: profiles[0].schedulerName: Required value",
            ],
        ),
        ("running", ["--timeout", "0.5"], ["report r1 still running after --timeout 0.5 seconds"]),
        ("html", [], ["server answered 200 with something that is not JSON (text/html)"]),
    ],
)
def test_server_errors_exit_2(
    files: dict[str, Path],
    stub: Stub,
    capsys: pytest.CaptureFixture[str],
    mode: str,
    extra: list[str],
    fragments: list[str],
) -> None:
    stub.mode = mode
    assert main(server_args(files, stub, "--fail-on", "changes", *extra)) == 2
    err = capsys.readouterr().err
    assert err.startswith("schedviz: error: ") and "Traceback" not in err
    for fragment in fragments:
        assert fragment in err


def test_server_wrong_token(files: dict[str, Path], stub: Stub, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args(files, "--server", stub.url, "--token", "wrong")) == 2
    err = capsys.readouterr().err
    assert "server answered 401 Unauthorized (check --token): Invalid token." in err


def test_server_unreachable_and_usage_errors(
    tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(args(files, "--server", f"http://127.0.0.1:{port}", "--token", TOKEN)) == 2
    assert f"cannot reach http://127.0.0.1:{port}/api/v1/reports/" in capsys.readouterr().err
    assert main(args(files, "--server", "http://127.0.0.1:1")) == 2
    assert "--server needs a token: pass --token or set SCHEDVIZ_TOKEN" in capsys.readouterr().err
    assert main(args(files, "--server", "file:///etc/passwd", "--token", TOKEN)) == 2
    assert "expected an http:// or https:// URL" in capsys.readouterr().err
    assert main(args(files, "--server", "http://127.0.0.1:1", "--token", TOKEN, "--timeout", "0")) == 2
    assert "--timeout must be positive" in capsys.readouterr().err
    missing = [
        "report",
        "--snapshot",
        str(tmp_path),
        "--config",
        str(files["config"]),
        "--server",
        "http://x",
    ]
    assert main([*missing, "--token", TOKEN]) == 2
    assert f"--snapshot {tmp_path}: no such file" in capsys.readouterr().err
