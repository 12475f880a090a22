"""The HTML report of the shared tiny run (``make report``), opened in a real headless browser:
Debian's Chromium driven through selenium. Every table view and figure must be in the report,
in its paper's category, and render; the page must log no script error. A screenshot of the
first page is kept in ``test-output/``.

Without Chromium, chromedriver or selenium the test skips, unless $PHENOMT_REQUIRE_BROWSER is
set (CI sets it), which turns the skip into a failure.
"""

from __future__ import annotations

import contextlib
import csv
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, TINY_CONFIG, run_snakemake

OUTPUT = ROOT / "test-output"
CATEGORIES = ("1. Given systems", "2. Long-distance dependencies", "3. Lexical consistency",
              "4. Non-autoregressive redundancy", "5. Data and models")
TABLES = ("ldd_table4.html", "ldd_table5.html", "nat_table10.html", "nat_speed.html",
          "lexcons_table3.html", "systems_bleu.html", "corpus_stats.html", "bleu.html")
FIGURES = ("systems_redundancy.png", "systems_ldd_sets.newstest2021.de-en.png",
           "systems_mqm.wmt21-ted.zh-en.png", "ldd_distance.png", "ldd_sets.png",
           "nat_redundancy.png", "nat_speedup.png", "lexcons_figure3.png",
           "lexcons_distance.png")


def _evaluate_report_captions(tmp_path: Path) -> dict[str, str]:
    """Every caption the report of a ``phenomt evaluate`` run shows, by the file it captions:
    its front page, each table's (from its declaration, through the tables template) and
    each figure's (its template, named after the figure: systems_mqm.<set> ->
    systems_mqm.rst). Built from the generated config's plan, without running anything."""
    from phenomt.evaluate import Request, evaluate_config, load_config_dict
    from phenomt.plan import Plan

    src, ref, mine, yours = (tmp_path / n for n in ("t.de", "t.en", "mine.en", "yours.en"))
    for path, text in ((src, "ein Satz\nnoch einer\n"), (ref, "a line\nanother\n"),
                       (mine, "a line\nanother\n"), (yours, "one line\nanother\n")):
        path.write_text(text, encoding="utf-8")
    request = Request(src=src, ref=ref, src_lang="de", tgt_lang="en",
                      hyps=(("mine", mine), ("yours", yours)), name="t.de-en",
                      baseline="mine", ldd=True, align_extra=(), metrics=("bleu",),
                      samples=100, mirror=None)
    plan = Plan(load_config_dict(evaluate_config(request)))
    plan.check()
    report = ROOT / "workflow" / "report"
    table_template = (report / "tables.rst").read_text(encoding="utf-8")
    captions = {"workflow.rst": (report / "workflow.rst").read_text(encoding="utf-8")}
    for path in plan.tables():
        if path.endswith(".csv"):
            stem = Path(path).name.removesuffix(".csv")
            captions[stem] = table_template.replace("{{ snakemake.params.caption }}",
                                                    plan.report.caption(stem))
    for path in plan.systems.figures():
        if path.endswith(".png"):
            template = report / (Path(path).name.split(".")[0] + ".rst")
            assert template.is_file(), path  # the figure rules' caption files
            captions[Path(path).name] = template.read_text(encoding="utf-8")
    return captions


def test_evaluate_report_captions_name_no_system_it_lacks(tmp_path):
    """The captions of a ``phenomt evaluate`` report (the user's systems "mine" and "yours",
    no kind stated) name none of the catalogued systems the default run scores, in full or
    by a distinctive part (GLAT of VolcTrans-GLAT), and claim no origin the user's files lack;
    the redundancy figure says what it draws for a system of no stated kind."""
    captions = _evaluate_report_captions(tmp_path)
    assert {"systems_bleu", "systems_redundancy", "systems_redundancy.png"} <= set(captions)
    with (ROOT / "src" / "phenomt" / "systems" / "data" / "sysout_systems.tsv").open(
            encoding="utf-8") as handle:
        rows = csv.DictReader((line for line in handle if not line.startswith("#")),
                              delimiter="\t")
        # system names, not the catalogue's plain words ("ref", "system") or its "*"
        names = {row["system"] for row in rows if re.search(r"[A-Z0-9-]", row["system"])}
    parts = {p for name in names for p in name.split("-") if len(p) >= 4
             and re.search(r"[A-Z]", p)}
    assert {"VolcTrans-GLAT", "GLAT", "Facebook-AI"} <= names | parts  # the check can fail
    for file, caption in captions.items():
        named = sorted(w for w in names | parts
                       if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", caption))
        assert not named, (file, named)
    # the origin is the catalogue's or the config's ("your file ..."), not "published WMT"
    assert "published" not in captions["systems_bleu"]
    assert "as the catalogue or the config gives them" in captions["systems_bleu"]
    assert "grey where none is stated" in " ".join(captions["systems_redundancy.png"].split())
    assert "each system against the baseline" in captions["systems_redundancy"]


def _find(name: str, *places: str) -> str | None:
    for place in places:
        if Path(place).is_file() and os.access(place, os.X_OK):
            return place
    return shutil.which(name)


def browser_paths() -> tuple[str, str]:
    """Chromium and its driver, or a skip (a failure with $PHENOMT_REQUIRE_BROWSER)."""
    chromium = _find("chromium", "/usr/bin/chromium")
    driver = _find("chromedriver", "/usr/bin/chromedriver")
    missing = [name for name, path in (("chromium", chromium), ("chromedriver", driver))
               if path is None]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip)")
    if missing:
        message = (f"no {', '.join(missing)}: apt-get install chromium chromium-driver, "
                   "pip install selenium")
        if os.environ.get("PHENOMT_REQUIRE_BROWSER"):
            pytest.fail(message + ", and PHENOMT_REQUIRE_BROWSER is set")
        pytest.skip(message)
    return chromium, driver


def make_report(workdir: Path) -> Path:
    """``make report`` on a finished run: the table views, then the report."""
    report = workdir / "results" / "report.html"
    started = time.monotonic()
    built = run_snakemake("--cores", "2", "--configfile", str(TINY_CONFIG),
                          "--directory", str(workdir), "report_inputs", timeout=900)
    assert built.returncode == 0, built.stderr[-5000:]
    made = run_snakemake("--report", str(report), "--configfile", str(TINY_CONFIG),
                         "--directory", str(workdir), "report_inputs", timeout=900)
    assert made.returncode == 0, made.stderr[-5000:]
    print(f"report inputs and report: {time.monotonic() - started:.1f} s")
    return report


def open_browser(chromium: str, driver_path: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver_path), options=options)


def wait_for(driver, script: str, timeout: float = 30):
    """Poll a JavaScript expression until it is truthy; returns its value."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(lambda d: d.execute_script(f"return {script}"))


def click(driver, locator: tuple[str, str], timeout: float = 30) -> None:
    """Click the element at ``locator`` once it is shown. Found and clicked in one step,
    tried again while the report redraws it (a redraw between finding and clicking leaves a
    stale element)."""
    from selenium.common.exceptions import (
        ElementClickInterceptedException,
        NoSuchElementException,
        StaleElementReferenceException,
    )
    from selenium.webdriver.support.ui import WebDriverWait

    def clicked(d) -> bool:
        try:
            element = d.find_element(*locator)
            if not (element.is_displayed() and element.is_enabled()):
                return False
            element.click()
        except (StaleElementReferenceException, NoSuchElementException,
                ElementClickInterceptedException):
            return False
        return True

    WebDriverWait(driver, timeout).until(clicked, f"nothing to click at {locator}")


def click_text(driver, text: str, timeout: float = 30) -> None:
    """Click the report's menu entry showing ``text`` once it is there."""
    from selenium.webdriver.common.by import By

    click(driver, (By.XPATH, f"//*[normalize-space(text())='{text}']"), timeout)


def shown_result(driver) -> tuple[str, int]:
    """The result on display and what it shows: rows of a table view, or the width of a
    decoded figure."""
    path, content = driver.execute_script("return [app.state.resultPath, app.state.content]")
    if content == "html":
        driver.switch_to.frame(wait_for(driver, "document.querySelector('#app iframe')"))
        try:
            size = wait_for(driver, "document.querySelectorAll('table.phenomt-table tbody tr')"
                            ".length")
        finally:
            driver.switch_to.default_content()
    else:
        assert content == "img", (path, content)
        size = wait_for(driver, "(() => { const i = Array.from(document.querySelectorAll("
                        "'#app img')).find(i => i.src == results[app.state.resultPath]"
                        ".data_uri); return i && i.complete && i.naturalWidth; })()")
    return path, size


def open_every_result(driver) -> dict[str, int]:
    """Click through the report as a reader does: every category, every subcategory and
    every result's view button; returns what each result showed, by file name."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By

    shown = {}
    for category in driver.execute_script("return Object.keys(categories)"):
        subcategories = driver.execute_script("return Object.keys(categories[arguments[0]])",
                                              category)
        for subcategory in subcategories:
            driver.execute_script("app.setView({navbarMode: 'menu'})")
            click_text(driver, category)
            if len(subcategories) > 1:
                click_text(driver, subcategory)
            expected = len(driver.execute_script(
                "return categories[arguments[0]][arguments[1]]", category, subcategory))
            # the listing may still be drawing; on a timeout the assertion says what it shows
            with contextlib.suppress(TimeoutException):
                wait_for(driver, "document.querySelectorAll('#app table tbody tr').length == "
                         f"{expected}", timeout=30)
            rows = len(driver.find_elements(By.CSS_SELECTOR, "#app table tbody tr"))
            assert rows == expected, (category, subcategory, rows, expected)
            for row in range(1, rows + 1):
                click(driver, (By.CSS_SELECTOR, f"#app table tbody tr:nth-child({row})"
                                                " td:last-child a"))
                path, size = shown_result(driver)
                shown[Path(path).name] = size
    return shown


@pytest.mark.integration
def test_report_shows_every_table_and_figure_in_a_browser(request, monkeypatch):
    chromium, driver_path = browser_paths()  # before paying for the shared run
    workdir = request.getfixturevalue("tiny_run")
    report = make_report(workdir)
    assert report.stat().st_size > 0
    OUTPUT.mkdir(exist_ok=True)
    monkeypatch.setenv("SE_OFFLINE", "true")  # selenium must not look for a browser online
    started = time.monotonic()
    driver = open_browser(chromium, driver_path)
    try:
        driver.get(report.as_uri())
        wait_for(driver, "document.querySelector('#loading-screen').style.display == 'none'"
                 " && document.querySelector('#app').children.length > 0")
        wait_for(driver, "document.querySelectorAll('#app svg, #app canvas').length > 0")
        shot = OUTPUT / "report-first-page.png"
        assert driver.save_screenshot(str(shot))
        print(f"screenshot of the report's first page: {shot}")

        categories = driver.execute_script("return Object.keys(categories)")
        assert set(CATEGORIES) <= set(categories), categories
        # the menu lists the given systems' findings first
        menu = driver.execute_script("return Object.keys(categories).sort((a, b) => "
                                     "a.localeCompare(b))")
        assert menu[0] == CATEGORIES[0], menu
        results = driver.execute_script(
            "return Object.entries(results).map(([p, r]) => [p, r.name, r.mime_type,"
            " r.caption])")
        by_name = {name: (path, mime, caption) for path, name, mime, caption in results}
        for name in TABLES:
            assert by_name[name][1] == "text/html", name
        for name in FIGURES:
            assert by_name[name][1] == "image/png", name
        for name in TABLES + FIGURES:
            assert "Scale of this run" in by_name[name][2], name  # the caption

        shown = open_every_result(driver)
        assert set(shown) == set(by_name), set(by_name) ^ set(shown)
        for name in TABLES:
            assert shown[name] > 0, name  # table rows
        for name in FIGURES:
            assert shown[name] > 300, name  # the figure's width in pixels, decoded

        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        driver.quit()
    print(f"browser checks: {time.monotonic() - started:.1f} s")
