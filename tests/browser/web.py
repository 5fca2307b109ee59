"""Headless Chromium for the browser tests: starting it, and what every page is checked for
(pictures that decode, in-page links that land, a console without errors, a screenshot)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

INSTALL = (
    "install the system's Chromium and its driver: `sudo apt-get install chromium chromium-driver` "
    "(Debian; Ubuntu: `sudo snap install chromium`), `sudo dnf install chromium chromedriver` (Fedora), "
    "and `pip install -e '.[test]'` for selenium (README, 'Browser tests')"
)
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver", "chromium.chromedriver")
WINDOW = (1280, 1000)
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def missing() -> str:
    """Why no browser test can run here ("" when everything is installed)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return f"selenium is not installed: {INSTALL}"
    if not _first_found(BROWSERS) or not _first_found(DRIVERS):
        return f"no Chromium or chromedriver on PATH: {INSTALL}"
    return ""


def _first_found(names) -> str | None:
    return next((path for path in map(shutil.which, names) if path), None)


def start_chromium():
    """Headless Chromium through the system's chromedriver (nothing is downloaded). Every host
    but the loopback is unresolvable, so a page that reaches out fails the same way everywhere."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = _first_found(BROWSERS)
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root, where Chromium's own sandbox refuses to start
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        "--allow-file-access-from-files",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(_first_found(DRIVERS)))


def console_errors(driver) -> list[str]:
    """Errors the page logged since the last call (uncaught exceptions, console.error, failed
    loads), less failed loads of other hosts' files: the tests run offline, and a page's
    script from a CDN (nbgrader's MathJax) loads wherever the reader is online."""
    errors = []
    for entry in driver.get_log("browser"):
        if entry["level"] == "SEVERE" and not _offline_fetch(entry["message"]):
            errors.append(entry["message"])
    return errors


def _offline_fetch(message: str) -> bool:
    url = message.split(" ", 1)[0]
    host = urlsplit(url).hostname or ""
    return "net::ERR_NAME_NOT_RESOLVED" in message and url.startswith("http") and host not in LOOPBACK


def broken_images(driver, within=None) -> list[str]:
    """The pictures (of the page, or of one element) that did not decode, by src and alt."""
    return driver.execute_script(
        """const root = arguments[0] || document;
        return [...root.querySelectorAll('img')]
          .filter(img => !(img.complete && img.naturalWidth > 0))
          .map(img => `${img.src.slice(0, 80)} (alt: ${img.alt})`);""",
        within,
    )


def image_count(driver) -> int:
    return driver.execute_script("return document.images.length")


def dead_links(driver) -> list[str]:
    """In-page links (#fragment) whose target is not on the page. A fragment names an element
    by id or by an <a name>, first as written, then percent-decoded; "#top" is the page's top
    (the HTML standard's rules for finding a fragment's target)."""
    return driver.execute_script(
        """const found = f => document.getElementById(f) || document.getElementsByName(f).length > 0;
        const decoded = f => { try { return decodeURIComponent(f); } catch (e) { return f; } };
        return [...document.querySelectorAll('a[href^="#"]')]
          .map(a => a.getAttribute('href').slice(1))
          .filter(f => f !== '' && f.toLowerCase() !== 'top' && !found(f) && !found(decoded(f)));""",
    )


def in_page_links(driver) -> int:
    return driver.execute_script("""return document.querySelectorAll('a[href^="#"]').length""")


def full_page_screenshot(driver, path: Path) -> Path:
    """The whole page, not only the window: the window grows to the page's height, then back."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(WINDOW[0], min(max(height, WINDOW[1]), 16000))
    time.sleep(0.2)  # one frame at the new size
    driver.save_screenshot(str(path))
    driver.set_window_size(*WINDOW)
    return path


def artifacts_dir(root: Path) -> Path:
    """Where screenshots go: $ZEROGPU_ARTIFACTS, else tests/browser/artifacts/ (git-ignored)."""
    folder = Path(os.environ.get("ZEROGPU_ARTIFACTS") or root / "tests" / "browser" / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def wait_for(condition, timeout: float, what: str, interval: float = 0.25):
    """Poll `condition()` until it returns something truthy; fail naming `what` on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)
