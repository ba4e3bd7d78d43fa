"""The client side of ``POST /api/v1/reports/`` (``schedviz report --server``), standard library only.

Protocol: the client POSTs ``multipart/form-data`` with the files ``snapshot``, ``config`` and
optionally ``baseline``, and ``wait`` (seconds the server may hold the request), with
``Authorization: Token <token>``. The server answers

- 200 with the report (``kind: SchedulingReport``) when it finished within ``wait``;
- 202 with ``{"id", "status": "queued" | "running", "url"}``: the client GETs the path of ``url``
  (absolute or relative; always on the scheme and host of ``--server``, so the token goes nowhere else)
  until ``status`` is ``succeeded`` (the report is in ``report``) or ``failed`` (the reason is in
  ``error``). A ``Retry-After`` header (seconds) on a pending answer
  sets the delay before the next poll; without it the client waits 1 s, growing to 5 s.

Every failure raises ``ClientError`` with a message fit for the command line.
"""

from __future__ import annotations

import json
import mimetypes
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path
from typing import Any

from schedviz.engine.errors import SchedVizError

from .build import check_report

REPORTS_PATH = "/api/v1/reports/"
PENDING = frozenset({"queued", "running"})
MAX_WAIT = 30  # seconds the server is asked to hold the POST
RETRIABLE = frozenset({502, 503, 504})
MAX_RETRIES = 3
USER_AGENT = "schedviz-report"


class ClientError(SchedVizError):
    """The server could not be reached, refused the request, or answered something unexpected."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are errors: following one would resend the token, and a POST would lose its body."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


_OPENER = urllib.request.build_opener(_NoRedirect())


@dataclass
class Upload:
    field: str
    path: Path


@dataclass
class Answer:
    status: int
    body: Any
    headers: Message = field(default_factory=Message)


def encode_multipart(fields: dict[str, str], files: list[Upload]) -> tuple[bytes, str]:
    """(body, content type) of a multipart/form-data request; reads the files."""
    boundary = "schedviz-" + secrets.token_hex(16)
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{_quote(name)}"\r\n\r\n'.encode()
            + value.encode()
            + b"\r\n"
        )
    for up in files:
        try:
            data = up.path.read_bytes()
        except OSError as exc:
            raise ClientError(f"--{up.field}: cannot read {up.path}: {exc.strerror or exc}") from None
        ctype = mimetypes.guess_type(up.path.name)[0] or "application/octet-stream"
        if up.path.suffix in (".yaml", ".yml"):
            ctype = "application/yaml"
        head = (
            f"--{boundary}\r\n"
            f'Content-Disposition: form-data; name="{_quote(up.field)}"; filename="{_quote(up.path.name)}"\r\n'
            f"Content-Type: {ctype}\r\n\r\n"
        )
        parts.append(head.encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


def _error_detail(body: bytes) -> str:
    """The useful part of an error answer.

    Understands SchedViz's ``{"error": {"code", "message", "details"}}``, DRF's ``{"detail": ...}`` and
    field errors (``{"field": ["problem", ...]}``); anything else is shown as (shortened) text.
    """
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:300]
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        err = data["error"]
        message = str(err.get("message") or err.get("code") or "")
        details = _flatten(err.get("details"))
        return f"{message}: {details}" if details and message else message or details
    if isinstance(data, dict):
        for key in ("detail", "error", "message"):
            if isinstance(data.get(key), str):
                return str(data[key])
    return _flatten(data)


def _flatten(value: object) -> str:
    """Error details as one line: lists joined, objects as ``key: value``."""
    if value is None:
        return ""
    if isinstance(value, list):
        return "; ".join(_flatten(v) for v in value)
    if isinstance(value, dict):
        if isinstance(value.get("problems"), list):
            where = f"{value['field']}: " if value.get("field") else ""
            return where + "; ".join(_flatten(v) for v in value["problems"])
        return "; ".join(f"{k}: {_flatten(v)}" for k, v in value.items())
    return str(value)


class ReportClient:
    """Submits a report request and waits for the report."""

    def __init__(
        self,
        server: str,
        token: str,
        *,
        timeout: float = 600.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        parsed = urllib.parse.urlsplit(server)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ClientError(f"--server: expected an http:// or https:// URL, got {server!r}")
        if not token:
            raise ClientError("--server needs a token: pass --token or set SCHEDVIZ_TOKEN")
        if timeout <= 0:
            raise ClientError(f"--timeout must be positive, got {timeout:g}")
        self.base = server.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.sleep = sleep
        self.clock = clock
        self.deadline = 0.0

    # ----- HTTP -----------------------------------------------------------------------------------
    def _remaining(self) -> float:
        return self.deadline - self.clock()

    def _request(self, url: str, data: bytes | None = None, content_type: str = "") -> Answer:
        headers = {
            "Authorization": f"Token {self.token}",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }
        if content_type:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(
            url, data=data, headers=headers, method="POST" if data is not None else "GET"
        )
        remaining = self._remaining()
        if remaining <= 0:
            raise self._timed_out()
        try:
            with _OPENER.open(req, timeout=remaining) as resp:
                status, raw, resp_headers = resp.status, resp.read(), resp.headers
        except urllib.error.HTTPError as exc:
            what = f"{req.get_method()} {url}: server answered {exc.code} {exc.reason}"
            if 300 <= exc.code < 400:
                where = exc.headers.get("Location", "")
                raise ClientError(
                    f"{what}, a redirect to {where or '?'}: give the final URL in --server"
                ) from None
            detail = _error_detail(exc.read())
            if exc.code in (401, 403):
                what += " (check --token)"
            raise ClientError(f"{what}: {detail}" if detail else what, exc.code) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise self._timed_out() from None
            raise ClientError(f"cannot reach {url}: {exc.reason}") from None
        except TimeoutError:
            raise self._timed_out() from None
        except OSError as exc:
            raise ClientError(f"{req.get_method()} {url}: {exc}") from None
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            ctype = resp_headers.get("Content-Type", "no content type")
            raise ClientError(
                f"{req.get_method()} {url}: server answered {status} with something that is not JSON ({ctype})"
            ) from None
        return Answer(status, body, resp_headers)

    def _timed_out(self) -> ClientError:
        return ClientError(f"no report within --timeout {self.timeout:g} seconds")

    # ----- protocol --------------------------------------------------------------------------------
    def submit(self, snapshot: Path, config: Path, baseline: Path | None = None) -> dict[str, Any]:
        """POST the files and return the finished report (polling when the server queues it)."""
        self.deadline = self.clock() + self.timeout
        files = [Upload("snapshot", snapshot), Upload("config", config)]
        if baseline is not None:
            files.append(Upload("baseline", baseline))
        wait = max(0, min(MAX_WAIT, int(self.timeout)))
        body, ctype = encode_multipart({"wait": str(wait)}, files)
        url = self.base + REPORTS_PATH
        answer = self._request(url, body, ctype)
        if answer.status == 200 and not _is_job(answer.body):
            return self._report(answer.body, url)
        if answer.status not in (200, 201, 202):
            raise ClientError(f"POST {url}: unexpected answer {answer.status}")
        return self._follow(answer, url)

    def _follow(self, answer: Answer, submit_url: str) -> dict[str, Any]:
        job = answer.body
        if not isinstance(job, dict) or "status" not in job:
            raise ClientError(
                f"POST {submit_url}: expected a report or a job with a status, got {_show(job)}"
            )
        poll_url = self._poll_url(job)
        delay = 1.0
        retries = 0
        while True:
            status = job.get("status")
            if status == "succeeded":
                return self._report(job.get("report"), poll_url)
            if status == "failed":
                raise ClientError(
                    f"report {job.get('id', '')} failed on the server: {job.get('error') or 'no reason given'}"
                )
            if status not in PENDING:
                raise ClientError(f"GET {poll_url}: unknown report status {status!r}")
            pause = _retry_after(answer.headers)
            if pause is None:
                pause, delay = delay, min(delay * 1.5, 5.0)
            if self._remaining() <= pause:
                raise ClientError(
                    f"report {job.get('id', '')} still {status} after --timeout {self.timeout:g} seconds"
                )
            self.sleep(pause)
            try:
                answer = self._request(poll_url)
            except ClientError as exc:
                if exc.status in RETRIABLE and retries < MAX_RETRIES:
                    retries += 1
                    continue
                raise
            retries = 0
            job = answer.body
            if not isinstance(job, dict):
                raise ClientError(f"GET {poll_url}: expected a JSON object, got {_show(job)}")

    def _poll_url(self, job: dict[str, Any]) -> str:
        """Where to poll: the path of the job's ``url`` (or ``{REPORTS_PATH}{id}/``) on the --server origin.

        Only the path is taken from the server: behind a proxy the URL Django builds may name an internal
        host or plain http, and the token goes nowhere but the scheme and host given in --server.
        """
        url = job.get("url")
        if isinstance(url, str) and url:
            full = urllib.parse.urljoin(self.base + "/", url)
        elif job.get("id") is not None:
            full = f"{self.base}{REPORTS_PATH}{urllib.parse.quote(str(job['id']))}/"
        else:
            raise ClientError("the server queued the report but gave neither its id nor its url")
        parsed = urllib.parse.urlsplit(full)
        own = urllib.parse.urlsplit(self.base)
        return urllib.parse.urlunsplit((own.scheme, own.netloc, parsed.path, parsed.query, ""))

    def _report(self, body: object, url: str) -> dict[str, Any]:
        try:
            return check_report(body)
        except ValueError as exc:
            raise ClientError(f"{url}: the server's answer is not a report: {exc}") from None


def _is_job(body: object) -> bool:
    return isinstance(body, dict) and "status" in body and "summary" not in body


def _retry_after(headers: Message) -> float | None:
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _show(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 120 else text[:117] + "..."


def fetch_report(
    server: str,
    token: str,
    snapshot: Path,
    config: Path,
    baseline: Path | None = None,
    *,
    timeout: float = 600.0,
) -> dict[str, Any]:
    """The report for ``snapshot`` under ``config`` (and ``baseline``) from a SchedViz server."""
    return ReportClient(server, token, timeout=timeout).submit(snapshot, config, baseline)
