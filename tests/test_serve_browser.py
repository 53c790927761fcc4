"""The triage page in a real headless Chromium (Debian's ``chromium``, driven by Playwright),
against ``dllogscan serve`` started on 127.0.0.1 on a free port."""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not shutil.which("chromium"):
    pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
pytest.importorskip("uvicorn", reason="the serve extra is not installed")

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
LIMIT = 50_000
LOG = ("Epoch 0:  12%|#         | 120/1000\n" * 5
       + "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible that "
         "dataloader's workers are out of shared memory.\n")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "dllogscan", "serve", "--port", str(port),
                             "--max-bytes", str(LIMIT)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url + "/", timeout=2).read()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"dllogscan serve did not start: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.2)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def page(server):
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        context = browser.new_context()
        external: list[str] = []
        context.on("request", lambda r: external.append(r.url) if not r.url.startswith(server) else None)
        pg = context.new_page()
        pg.goto(server + "/")
        yield pg
        assert external == [], f"the page fetched outside assets: {external}"
        browser.close()


def test_paste_diagnose_shows_class_fixes_and_copy_buttons(page):
    page.fill("#paste", LOG)
    page.click("#diagnose")
    page.wait_for_selector("#result:not([hidden])", timeout=20_000)
    assert "Class A / bus-error" in page.inner_text("#verdict")
    card = page.locator(".diagnosis").first
    assert card.get_attribute("data-class") == "A"
    assert "shared memory (/dev/shm) exhausted" in card.locator("h3").inner_text()  # named as /api/classes names it
    assert "Raise /dev/shm" in card.inner_text()
    assert page.locator(".command code", has_text="df -h /dev/shm").count() >= 1
    assert page.locator(".command button.copy").count() >= 2
    assert page.locator(".command pre.code", has_text="prefetch_factor=1").count() >= 1  # code fixes too
    evidence = page.locator(".context .evidence")
    assert evidence.count() == 1 and "Bus error" in evidence.inner_text() and "6" in evidence.inner_text()
    assert "**Verdict:** class A" in page.input_value("#reply")
    assert page.locator("button[data-copy-from=reply]").count() == 1


def test_a_text_with_only_a_lead_shows_its_note_not_a_clean_bill(page):
    page.fill("#paste", "RuntimeError: Pin memory thread exited unexpectedly\n")
    page.click("#diagnose")
    page.locator("#verdict", has_text="see the notes").wait_for(timeout=20_000)  # no string eval: the page's CSP
    assert page.locator(".diagnosis").count() == 0
    note = page.locator("#notes .note")
    assert note.count() == 1 and "pin-memory thread" in note.inner_text() and "Exception in thread" in note.inner_text()
    page.fill("#paste", LOG)  # a diagnosis after it: the old note goes
    page.click("#diagnose")
    page.locator("#verdict", has_text="Class A").wait_for(timeout=20_000)
    assert page.locator("#notes").is_hidden() and page.locator("#notes .note").count() == 0


def test_oversized_paste_is_refused_cleanly(page, server):
    page.fill("#paste", "x" * (LIMIT * 2))
    page.click("#diagnose")
    page.wait_for_selector("#status.error", timeout=20_000)
    assert "Too large" in page.inner_text("#status") and str(LIMIT) in page.inner_text("#status")
    resp = page.request.post(server + "/api/diagnose", data={"text": "y" * (LIMIT * 2)})
    assert resp.status == 413 and "limit" in resp.json()["error"]


def test_markup_in_a_paste_is_shown_as_text(page):
    """What a paste holds reaches the page only as text (textContent, never innerHTML): markup in
    the evidence line and around it is shown, not run or built into elements."""
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    bait = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    page.fill("#paste", f"<b>{bait}</b>\n" + LOG.replace("Bus error.", f"Bus error. {bait}"))
    page.click("#diagnose")
    page.locator("#verdict", has_text="Class A").wait_for(timeout=20_000)
    assert page.locator("#result img, #result script, #result b").count() == 0
    assert bait in page.locator(".context .evidence").inner_text()
    assert dialogs == []
