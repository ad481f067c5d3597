"""What the browser tests share: headless Chromium (Debian's ``chromium`` and ``chromium-driver``
packages) driven by Selenium, one browser per test module, and :func:`page_figures`, which draws
every figure of a report page and says how each ended."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

#: skips a test where Chromium or its driver is not installed
needs_browser = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="needs Chromium and its driver (Debian: apt-get install chromium chromium-driver)",
)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium at 1,280 x 1,000 px with a fresh profile, its console logged."""
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="needs selenium (pip install 'clad[test]')"
    )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(
        options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER)
    )
    yield driver
    driver.quit()


_STATE = "return Array.from(document.querySelectorAll('div.chart[data-chart]')).map(e => [e.getAttribute('data-id'), e.className, e.textContent.slice(0, 200)])"


def page_figures(browser, path: Path) -> list:
    """Open ``path``, draw every figure at once and return ``(id, class, text)`` of each; the
    console's errors are read by the caller."""
    browser.get(path.resolve().as_uri())
    browser.execute_script("if (window.cladDrawAllCharts) { window.cladDrawAllCharts(); }")
    for _ in range(300):
        state = browser.execute_script(_STATE)
        if all("drawn" in c or "failed" in c for _, c, _ in state):
            return state
        time.sleep(0.1)
    return state
