"""Drives a running Ghost with headless Chromium: python3 drive.py BASE_URL OUTPUT_DIR.

Checks what a person would see, saves a screenshot at each step, and exits non-zero with the reason when a
check fails.
"""
import os
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as loaded
from selenium.webdriver.support.ui import WebDriverWait

base, output = sys.argv[1].rstrip("/"), sys.argv[2]
os.makedirs(output, exist_ok=True)

options = webdriver.ChromeOptions()
for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"):
    options.add_argument(argument)
options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)


def check(condition, message):
    if not condition:
        driver.save_screenshot(os.path.join(output, "failure.png"))
        print("FAILED: " + message)
        driver.quit()
        sys.exit(1)


def widgets():
    return [section.get_attribute("data-module") for section in driver.find_elements(By.CSS_SELECTOR, "section.widget")]


def revoke_or_grant(entitlement):
    """Clicks the entitlement's button on Settings and waits for the page the form post leads back to."""
    driver.get(base + "/settings")
    row = f'tr[data-entitlement="{entitlement}"]'
    button = driver.find_element(By.CSS_SELECTOR, row + " button")
    button.click()
    WebDriverWait(driver, 30).until(loaded.staleness_of(button))
    WebDriverWait(driver, 30).until(loaded.presence_of_element_located((By.CSS_SELECTOR, row)))


try:
    driver.get(base + "/dashboard")
    check(widgets() == ["com.ghost.weather", "com.ghost.sports", "com.ghost.art"],
          f"the dashboard shows Weather, Sports, Art in priority order, not {widgets()}")
    driver.save_screenshot(os.path.join(output, "dashboard.png"))

    driver.get(base + "/open?url=ghost://sports/sports/team?name=Celtics")
    # The link sets the favourite team, so a GET only asks; the confirmation posts it with the page's token.
    confirm = driver.find_element(By.CSS_SELECTOR, 'form[action="/open"] button')
    confirm.click()
    WebDriverWait(driver, 30).until(loaded.staleness_of(confirm))
    WebDriverWait(driver, 30).until(loaded.presence_of_element_located((By.CSS_SELECTOR, ".notice")))
    current = driver.find_element(By.CSS_SELECTOR, "nav.tabs a[aria-current=page]").get_attribute("data-item")
    check(current == "sports", f"the team link lands on the Sports tab, not {current}")
    check("handled by com.ghost.sports" in driver.find_element(By.CSS_SELECTOR, ".notice").text,
          "the page says which module handled the link")
    driver.save_screenshot(os.path.join(output, "deeplink.png"))

    revoke_or_grant("weather")
    check("not granted" in driver.find_element(By.CSS_SELECTOR, 'tr[data-entitlement="weather"]').text,
          "Settings shows weather as not granted after Revoke")
    driver.save_screenshot(os.path.join(output, "settings-revoked.png"))
    driver.get(base + "/dashboard")
    check(widgets() == ["com.ghost.sports", "com.ghost.art"], f"revoking weather removes its widget: {widgets()}")

    revoke_or_grant("weather")
    driver.get(base + "/dashboard")
    check(widgets() == ["com.ghost.weather", "com.ghost.sports", "com.ghost.art"],
          f"granting weather brings its widget back first: {widgets()}")
    driver.save_screenshot(os.path.join(output, "dashboard-restored.png"))
    print("OK: dashboard order, deeplink tab, revoke and grant from Settings")
finally:
    driver.quit()
