"""Renders servesim reports in headless Chromium (Debian's chromium, chromium-driver and
python3-selenium) and checks what a reader sees: the page renders, every figure is present and
drawn at a visible size, nothing is fetched from elsewhere, and the console holds no error.

Usage: report_in_browser.py SERVESIM_CLI WORK_DIR. Exits 77 (CTest: skipped) when Chromium,
its driver or selenium is missing; the README's set-up installs them.
"""
import json
import os
import shutil
import subprocess
import sys

SKIP = 77


def servesim(cli, *args):
    result = subprocess.run([cli, *args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"servesim {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result.stdout


def main():
    cli, work = sys.argv[1], sys.argv[2]
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        print("skipped: python3-selenium is not installed (apt-get install python3-selenium)")
        return SKIP
    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        print("skipped: chromium or chromedriver is not installed "
              "(apt-get install chromium chromium-driver)")
        return SKIP

    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    sweep = os.path.join(work, "sweep")
    capacity = os.path.join(work, "capacity")
    run = os.path.join(work, "run")
    servesim(cli, "sweep", "--grid", "rate=2,4,8", "--grid", "scheduler=vllm,sarathi",
             "--num-requests", "150", "--out", sweep)
    servesim(cli, "capacity", "--slo", "ttft_p99=0.5", "--num-requests", "150",
             "--max-points", "8", "--out", capacity)
    servesim(cli, "run", "--num-requests", "150", "--out", run)

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,2000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    failures = []
    try:
        for folder, kind in ((sweep, "sweep"), (capacity, "capacity"), (run, "run")):
            servesim(cli, "report", folder)
            page = os.path.join(folder, "report.html")
            svgs_on_disk = sum(1 for _, _, files in os.walk(folder)
                               for f in files if f.endswith(".svg"))
            driver.get("file://" + os.path.abspath(page))
            title = driver.title
            if not title.startswith(f"servesim {kind}:"):
                failures.append(f"{kind}: title {title!r}")
            figures = driver.execute_script(
                "return Array.from(document.querySelectorAll('figure .figure')).map(e => {"
                " const r = e.getBoundingClientRect();"
                " return [r.width, r.height, e.querySelectorAll('path, polyline, text').length]; })")
            if len(figures) != svgs_on_disk or not figures:
                failures.append(f"{kind}: {len(figures)} figures on the page, "
                                f"{svgs_on_disk} SVG files in the folder")
            for width, height, marks in figures:
                if width < 300 or height < 150 or marks < 10:
                    failures.append(f"{kind}: a figure drawn {width}x{height} px with "
                                    f"{marks} marks")
            rows = driver.execute_script(
                "return document.querySelectorAll('#summary tbody tr').length")
            if rows < 1:
                failures.append(f"{kind}: the summary has no table rows")
            errors = [entry for entry in driver.get_log("browser")
                      if entry.get("level") == "SEVERE"]
            if errors:
                failures.append(f"{kind}: console errors {errors}")
            requests = []
            for entry in driver.get_log("performance"):
                message = json.loads(entry["message"])["message"]
                if message.get("method") == "Network.requestWillBeSent":
                    requests.append(message["params"]["request"]["url"])
            outside = [url for url in requests
                       if not url.startswith("file://") and not url.startswith("data:")]
            if outside:
                failures.append(f"{kind}: the page fetched {outside}")
            # A phone's width: the page reflows, figures shrink to fit, nothing overflows.
            driver.set_window_size(390, 844)
            overflow = driver.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth")
            if overflow > 1:
                failures.append(f"{kind}: {overflow} px wider than a 390 px phone screen")
            driver.save_screenshot(os.path.join(work, f"{kind}.png"))
            driver.set_window_size(1280, 2000)
            print(f"{kind}: {len(figures)} figures rendered, {rows} summary rows, "
                  f"no console errors, nothing fetched")
    finally:
        driver.quit()
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
