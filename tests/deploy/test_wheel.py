"""The package as a user installs it: the wheel built from the checkout carries the templates and the
built explorer, and, installed into a fresh virtualenv and started outside the repository,
`schedviz serve --demo` signs a user in and shows a replay in Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import urllib.request
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.serving import free_port, serving

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("SCHEDVIZ_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{why} (required in CI: $CI is set)", pytrace=False)
    pytest.skip(why)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (ROOT / "schedviz" / "explorer" / "index.html").exists():
        _unavailable("the explorer is not built: cd frontend && npm ci && npm run build")
    out = tmp_path_factory.mktemp("wheel")
    # from a clean copy of the sources: an in-tree build/ left by an earlier build would ship stale modules
    src = tmp_path_factory.mktemp("src") / "schedviz-src"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "dist", "*.egg-info", "node_modules", "frontend", "tests", "var",
            "test-artifacts", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache",
        ),
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(src)],
        check=True,
        capture_output=True,
    )
    [built] = out.glob("schedviz-*.whl")
    return built


def test_the_wheel_carries_templates_and_the_built_explorer(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    # exactly the package's modules, nothing stale
    sources = {str(p.relative_to(ROOT)) for p in (ROOT / "schedviz").rglob("*.py") if "__pycache__" not in p.parts}
    assert {n for n in names if n.endswith(".py")} == sources
    assert "schedviz/templates/registration/login.html" in names
    assert "schedviz/templates/home.html" in names
    assert "schedviz/explorer/index.html" in names
    assets = [n for n in names if n.startswith("schedviz/explorer/assets/")]
    assert any(n.endswith(".js") for n in assets) and any(n.endswith(".css") for n in assets)
    # every script and style the wheel carries is reached from the index: named by it, or loaded by a
    # script it reaches (a page's chunk loaded with the page); nothing stale
    z = zipfile.ZipFile(wheel)
    index = z.read("schedviz/explorer/index.html").decode()
    wanted = {a.rsplit("/", 1)[1]: a for a in assets if a.endswith((".js", ".css"))}
    reached = {name for name in wanted if "/static/assets/" + name in index}
    todo = [n for n in reached if n.endswith(".js")]
    while todo:
        text = z.read(wanted[todo.pop()]).decode()
        for name in wanted:
            if name not in reached and name in text:
                reached.add(name)
                if name.endswith(".js"):
                    todo.append(name)
    assert reached == set(wanted), sorted(set(wanted) - reached)
    assert any("/static/assets/" + n in index for n in wanted if n.endswith(".js"))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel installed; its dependencies come from this interpreter's
    site-packages (a .pth file), so the test needs no registry, and the source tree is not on its path."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.check_output([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    deps = Path(sysconfig.get_paths()["purelib"])
    # every site directory of the test's interpreter except the checkout itself (an editable install)
    (site / "zz_dependencies.pth").write_text(str(deps) + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    assert (env_dir / "bin" / "schedviz").exists()  # the console script
    return env_dir


@pytest.fixture(scope="module")
def server(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    work = tmp_path_factory.mktemp("outside")  # not the checkout: nothing of the source tree is importable
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PYTHONPATH", "DJANGO_SETTINGS_MODULE")}
    env.update(SCHEDVIZ_DATA_DIR=str(work / "data"), SCHEDVIZ_TASK_MODE="thread", PYTHONSAFEPATH="1")
    command = [str(installed / "bin" / "schedviz"), "serve", "--demo", "--host", "127.0.0.1", "--port", str(port)]
    with serving(command, work, env, work / "server.log", port) as base:
        where = subprocess.check_output(
            [str(installed / "bin" / "python"), "-c", "import schedviz; print(schedviz.__file__)"], cwd=work, env=env, text=True
        )
        assert str(ROOT) not in where, where  # the installed package, not the checkout
        yield base


def test_the_installed_package_serves_sign_in_and_a_replay(server: str) -> None:
    with urllib.request.urlopen(f"{server}/accounts/login/", timeout=10) as r:
        assert r.status == 200 and b'name="password"' in r.read()
    if not Path(CHROMIUM).exists():
        _unavailable(f"Chromium not found at {CHROMIUM}")
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()
            page.goto(f"{server}/accounts/login/")
            page.fill("input[name=username]", "demo")
            page.fill("input[name=password]", "demo")
            with page.expect_navigation():
                page.click("button[type=submit]")
            assert "/accounts/login" not in page.url
            page.goto(f"{server}/replays")
            link = page.get_by_role("link", name="Sample cluster, default profile").first
            expect(link).to_be_visible(timeout=30_000)
            link.click()
            expect(page.get_by_role("heading", name="Sample cluster, default profile")).to_be_visible(timeout=30_000)
            expect(page.get_by_text("succeeded").first).to_be_visible(timeout=60_000)
        finally:
            browser.close()
