"""Drives a running Ghost with headless Chromium: python3 drive.py BASE_URL OUTPUT_DIR.

Checks what a person would see, saves a screenshot at each step, and exits non-zero with the reason when a
check fails.
"""
import os
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
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


def submit_and_wait(selector):
    """Clicks the button `selector` finds and waits until the browser shows the page the form's post leads to.

    A live page may replace its regions between finding the button and clicking it (a change made just before
    reached it), so a button gone stale is found again. Waits on a mark set in the old document, not on the button
    going stale: while the page is being replaced, asking chromedriver about the old button can fail with "Node ...
    does not belong to the document" instead of reporting it stale, so errors during the switch are retried.
    """
    driver.execute_script("window.mosaicBeforeSubmit = true")
    for attempt in range(5):
        try:
            driver.find_element(By.CSS_SELECTOR, selector).click()
            break
        except StaleElementReferenceException:
            if attempt == 4:
                raise
    WebDriverWait(driver, 30, ignored_exceptions=(WebDriverException,)).until(
        lambda _: driver.execute_script("return document.readyState === 'complete' && !window.mosaicBeforeSubmit"))


def revoke_or_grant(entitlement):
    """Clicks the entitlement's button on Settings and waits for the page the form post leads back to."""
    driver.get(base + "/settings")
    row = f'tr[data-entitlement="{entitlement}"]'
    submit_and_wait(row + " button")
    WebDriverWait(driver, 30).until(loaded.presence_of_element_located((By.CSS_SELECTOR, row)))


try:
    driver.get(base + "/dashboard")
    check(widgets() == ["com.ghost.weather", "com.ghost.sports", "com.ghost.art"],
          f"the dashboard shows Weather, Sports, Art in priority order, not {widgets()}")
    driver.save_screenshot(os.path.join(output, "dashboard.png"))

    driver.get(base + "/open?url=ghost://sports/sports/team?name=Celtics")
    # The link sets the favourite team, so a GET only asks; the confirmation posts it with the page's token.
    submit_and_wait('form[action="/open"] button')
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

    # Two windows: what one does shows in the other's dashboard without a reload.
    acting = driver.current_window_handle
    driver.switch_to.new_window("window")
    watching = driver.current_window_handle
    driver.get(base + "/dashboard")
    # A reload would lose this mark.
    driver.execute_script("window.notReloaded = true")

    def watch(condition, message):
        """Switches to the watching window and waits for `condition` there, without reloading it."""
        driver.switch_to.window(watching)
        try:
            WebDriverWait(driver, 30).until(lambda _: condition())
        except Exception:
            check(False, message + f" (widgets: {widgets()})")
        check(driver.execute_script("return window.notReloaded === true"), "the watching window was not reloaded")

    def weather_city():
        headings = driver.find_elements(By.CSS_SELECTOR, 'section.widget[data-module="com.ghost.weather"] h3')
        return headings[0].text if headings else None

    driver.switch_to.window(acting)
    revoke_or_grant("weather")
    watch(lambda: widgets() == ["com.ghost.sports", "com.ghost.art"],
          "revoking weather in one window removes its widget in the other")
    driver.save_screenshot(os.path.join(output, "live-revoked.png"))

    driver.switch_to.window(acting)
    revoke_or_grant("weather")
    watch(lambda: widgets() == ["com.ghost.weather", "com.ghost.sports", "com.ghost.art"],
          "granting weather in one window brings its widget back in the other")
    city = weather_city()

    driver.switch_to.window(acting)
    target = "Lisbon" if city != "Lisbon" else "Oslo"
    driver.get(base + f"/open?url=ghost://dashboard/weather/city?name={target}")
    submit_and_wait('form[action="/open"] button')
    watch(lambda: weather_city() == target,
          f"opening the {target} link in one window changes the other's weather widget (it shows {weather_city()})")
    driver.save_screenshot(os.path.join(output, "live-city.png"))
    print("OK: dashboard order, deeplink tab, revoke and grant from Settings; a second window follows live")
finally:
    driver.quit()
