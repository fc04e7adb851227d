"""The explorer at `/`, driven in a headless Chromium (Debian's, through Selenium from PyPI) against
themet and the fake Met (met-fixture-server), both real processes on loopback. The pictures come
through themet (`/images`, `/iiif`) from the fake's image host; the browser resolves no other
name, so a picture fetched from anywhere else fails to load, and any error in the browser's
console fails the test. Screenshots of the main states go to .build/explorer-screenshots/."""

import json
import re
import shutil
import tempfile
import time
import unittest
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from servers import ROOT, WORK, Servers, browser, fetch, wait_until

SCREENSHOTS = ROOT / ".build" / "explorer-screenshots"
# The image host unpaced too: a grid of thumbnails comes at once.
IMAGES_UNPACED = ["--image-rate", "1000", "--image-burst", "1000", "--image-concurrency", "16"]
UNPACED = ["--upstream-rate", "1000", "--upstream-burst", "1000", "--upstream-concurrency", "64", *IMAGES_UNPACED]


class ExplorerTestCase(unittest.TestCase):
    """One browser for the class; servers per test, as each test needs."""

    @classmethod
    def setUpClass(cls):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        cls.driver = browser()

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()

    def setUp(self):
        self.allowed_errors = []
        self.servers = None

    def tearDown(self):
        # Leave the page first, so that nothing it still has under way meets stopped servers
        # (and logs that against the next test).
        self.driver.get("about:blank")
        errors = self.console_errors()
        if self.servers:
            self.servers.stop()
        self.assertEqual(errors, [], "the browser's console has errors")

    def start(self, fake=(), themet=UNPACED, fixtures=ROOT / "Fixtures"):
        self.servers = Servers(fake=fake, themet=themet, fixtures=fixtures)
        return self.servers

    def console_errors(self):
        """SEVERE entries of the console since the last call, except those a test expects
        (`allowed_errors`: patterns of the failed responses it provokes)."""
        entries = self.driver.get_log("browser")
        return [entry["message"] for entry in entries if entry["level"] == "SEVERE"
                and not any(re.search(pattern, entry["message"]) for pattern in self.allowed_errors)]

    # Helpers

    def open(self, path="/"):
        self.driver.get(self.servers.url + path)
        wait_until(lambda: self.driver.execute_script("return document.readyState") == "complete")

    def by_id(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    def state(self):
        return self.by_id("status").get_attribute("data-state")

    def wait_for_state(self, *states, timeout=30):
        return wait_until(lambda: self.state() in states and self.state(), timeout=timeout,
                          message=f"the status never became {states}; it is {self.state()}: "
                                  f"{self.by_id('status').text}")

    def search(self, words, sort=None, order=None, **checks):
        field = self.by_id("q")
        field.clear()
        field.send_keys(words)
        for name, value in checks.items():
            box = self.by_id(name)
            if box.is_selected() != value:
                box.click()
        if sort:
            Select(self.by_id("sort")).select_by_value(sort)
        if order:
            Select(self.by_id("order")).select_by_value(order)
        self.by_id("search-button").click()

    def wait_for_results_of(self, fragment):
        """Waits until the search on screen is the one whose parameters hold `fragment`, and done."""
        wait_until(lambda: fragment in (self.by_id("status").get_attribute("data-query") or "")
                   and self.state() == "results", message=f"no results for a search with {fragment}")

    def cards(self):
        return self.driver.find_elements(By.CSS_SELECTOR, "#results .card")

    def card_titles(self):
        return [card.find_element(By.CLASS_NAME, "title").text for card in self.cards()]

    def card_ids(self):
        return [int(card.get_attribute("data-id")) for card in self.cards()]

    def screenshot(self, name):
        self.driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))

    def api(self, path):
        status, _, body = self.servers.get(path)
        self.assertEqual(status, 200, body[:200])
        return json.loads(body)


class SearchTests(ExplorerTestCase):
    def test_search_sort_both_ways_page_and_the_detail_views(self):
        self.start(fake=["--synthetic", "2000"])
        self.open("/")
        self.wait_for_state("idle")
        self.assertEqual(self.by_id("status-title").text, "No search yet.")
        wait_until(lambda: len(Select(self.by_id("departmentId")).options) > 1, message="no departments")
        self.screenshot("01-idle")

        self.search("landscape")
        self.wait_for_state("results")
        expected = self.api("/search?q=landscape&limit=24")
        self.assertEqual(self.card_ids()[:24], [record["objectID"] for record in expected["objects"]])
        self.assertIn("188 results", self.by_id("status-title").text)
        self.screenshot("02-results")

        # Sort by title, both ways: the page's titles in order (the server sorts within the page).
        self.search("landscape", sort="title", order="asc")
        self.wait_for_results_of("sort=title")
        ascending = self.card_titles()[:24]
        self.assertEqual(ascending, sorted(ascending, key=str.lower))
        self.search("landscape", sort="title", order="desc")
        self.wait_for_results_of("sort=-title")
        descending = self.card_titles()[:24]
        self.assertEqual(descending, sorted(descending, key=str.lower, reverse=True))
        # By ID, both ways: the whole list is sorted before paging.
        self.search("landscape", sort="id", order="asc")
        self.wait_for_results_of("sort=id")
        ids = self.card_ids()
        self.assertEqual(ids, sorted(ids))
        self.search("landscape", sort="id", order="desc")
        self.wait_for_results_of("sort=-id")
        ids = self.card_ids()
        self.assertEqual(ids, sorted(ids, reverse=True))
        self.assertGreater(ids[0], 1900)

        # The next page, on scrolling to the end (a page shows fewer than 24 cards when some of
        # its IDs are missing or without an image).
        first_page = len(self.cards())
        self.driver.execute_script("document.getElementById('sentinel').scrollIntoView()")
        wait_until(lambda: len(self.cards()) > first_page, message="the next page did not load on scroll")
        wait_until(lambda: self.state() == "results")
        ids = self.card_ids()
        self.assertEqual(ids, sorted(ids, reverse=True))

        # Keyboard: arrow keys move through the grid.
        self.driver.execute_script("window.scrollTo(0, 0)")
        first = self.driver.find_element(By.CSS_SELECTOR, "#results .card > a")
        first.send_keys(Keys.ARROW_RIGHT)
        focused = self.driver.switch_to.active_element
        self.assertEqual(focused.find_element(By.XPATH, "..").get_attribute("data-id"), str(ids[1]))

        # A public-domain result opens the detail view; Escape closes it.
        public = next(card for card in self.cards()
                      if card.find_element(By.TAG_NAME, "a").get_attribute("href").count("#/objects/"))
        public_id = public.get_attribute("data-id")
        public.find_element(By.TAG_NAME, "a").click()
        wait_until(lambda: self.by_id("detail-body").get_attribute("data-state") == "detail")
        record = self.api(f"/objects/{public_id}")
        self.assertEqual(self.by_id("detail-title").text, record["title"])
        text = self.by_id("detail-body").text
        for value in (record["objectDate"], record["medium"], record["creditLine"]):
            if value:
                self.assertIn(value, text)
        stage = self.driver.find_element(By.CSS_SELECTOR, "#detail-body .stage")
        wait_until(lambda: stage.get_attribute("data-state") == "ready", timeout=30, message="no picture")
        self.assertEqual(stage.get_attribute("aria-label"), f"{record['title']}, by {record['artistDisplayName']}"
                         if record["artistDisplayName"] else record["title"])
        self.screenshot("03-detail")
        self.driver.switch_to.active_element.send_keys(Keys.ESCAPE)
        wait_until(lambda: not self.by_id("detail").get_attribute("open"))
        wait_until(lambda: "#/search?" in self.driver.current_url, message="closing did not go back to the search")
        # Focus is back on the result the detail view was opened from.
        wait_until(lambda: self.driver.switch_to.active_element.find_element(By.XPATH, "..")
                   .get_attribute("data-id") == public_id, message="focus did not come back to the result")

    def test_deep_links_open_an_object(self):
        self.start()
        self.open("/#/objects/436535")
        wait_until(lambda: self.by_id("detail-body").get_attribute("data-state") == "detail")
        self.assertEqual(self.by_id("detail-title").text, "Wheat Field with Cypresses")
        manifest = self.driver.find_element(By.LINK_TEXT, "IIIF manifest")
        self.assertEqual(manifest.get_attribute("href"), f"{self.servers.url}/iiif/436535/manifest.json")
        self.by_id("detail-close").click()
        wait_until(lambda: not self.by_id("detail").get_attribute("open"))
        wait_until(lambda: self.driver.current_url.endswith("#/"), message="closing did not show the search")

        # A themet:// link resolves through /open to the same view.
        self.open("/#/open?url=themet://437980")
        wait_until(lambda: self.by_id("detail-body").get_attribute("data-state") == "detail"
                   and self.by_id("detail-title").text == "Cypresses")
        self.assertTrue(self.driver.current_url.endswith("#/objects/437980"))

        # An object that is not in the public domain: the link out through /open/{id} to the
        # Met's page, not a detail view.
        self.open("/#/objects/1")
        wait_until(lambda: self.by_id("detail-body").get_attribute("data-state") == "link-out")
        out = self.driver.find_element(By.CSS_SELECTOR, "#detail-body a[data-link-out]")
        self.assertEqual(out.get_attribute("href"), f"{self.servers.url}/open/1")
        self.assertEqual(out.get_attribute("target"), "_blank")
        status, headers, _ = fetch(out.get_attribute("href"))
        self.assertEqual(status, 302)
        self.assertEqual(headers["Location"], "https://www.metmuseum.org/art/collection/search/1")
        self.screenshot("04-link-out")

    def test_nothing_found(self):
        self.start()
        self.open("/")
        self.search("qqqzzzx")
        self.wait_for_state("empty")
        self.assertEqual(self.by_id("status-title").text, "Nothing found for “qqqzzzx”.")
        self.assertEqual(self.cards(), [])
        self.screenshot("05-nothing-found")

    def test_a_shared_search_link_restores_the_form_and_the_search(self):
        self.start(fake=["--synthetic", "2000"])
        self.open("/#/search?q=landscape&isPublicDomain=true&isHighlight=true&departmentId=11&sort=-date")
        self.wait_for_state("results", "empty")
        self.assertEqual(self.by_id("q").get_attribute("value"), "landscape")
        self.assertTrue(self.by_id("isPublicDomain").is_selected())
        self.assertTrue(self.by_id("isHighlight").is_selected())
        self.assertTrue(self.by_id("hasImages").is_selected())
        wait_until(lambda: Select(self.by_id("departmentId")).first_selected_option.get_attribute("value") == "11")
        self.assertEqual(Select(self.by_id("sort")).first_selected_option.get_attribute("value"), "date")
        self.assertEqual(Select(self.by_id("order")).first_selected_option.get_attribute("value"), "desc")
        # What the explorer asked the server: the Met's filters, not its own public-domain one.
        asked = self.driver.execute_script(
            "return performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.includes('/search?'))")
        self.assertTrue(asked)
        for url in asked:
            self.assertIn("isHighlight=true", url)
            self.assertIn("departmentId=11", url)
            self.assertIn("sort=-date", url)
            self.assertNotIn("isPublicDomain", url)
        for card in self.cards():
            self.assertNotIn("link-out", card.get_attribute("class"))

    def test_a_phone_sized_window_reads_without_sideways_scrolling(self):
        self.start()
        # A phone's viewport (a desktop window cannot be made this narrow).
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        try:
            self.open("/#/search?q=cypress")
            self.wait_for_state("results")
            self.assertEqual(self.driver.execute_script("return window.innerWidth"), 390)
            overflowing = self.driver.execute_script(
                "return [...document.querySelectorAll('body *')].filter((e) => "
                "e.getBoundingClientRect().right > window.innerWidth + 0.5).map((e) => e.tagName + '#' + e.id)")
            self.assertEqual(overflowing, [])
            self.assertLessEqual(self.driver.execute_script("return document.documentElement.scrollWidth"), 390)
            self.screenshot("06-phone")
        finally:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


class PictureTests(ExplorerTestCase):
    def loaded(self, image):
        return self.driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", image)

    def stage(self):
        return self.driver.find_element(By.CSS_SELECTOR, "#detail-body .stage")

    def tiles(self):
        """The tiles on screen at one instant (the viewer adds and drops them as it goes): each
        one's `src`, whether it arrived, its width in pixels, its scale factor, and whether that is
        the scale the viewer wants now."""
        return self.driver.execute_script(
            "const wanted = document.querySelector('#detail-body .stage').dataset.scale; "
            "return [...document.querySelectorAll('#detail-body .stage img.tile')].map((tile) => "
            "({src: tile.src, loaded: tile.complete && tile.naturalWidth > 0, width: tile.naturalWidth, "
            "scale: Number(tile.dataset.scale), current: tile.dataset.scale === wanted}))")

    def arrived_tiles(self):
        """The tiles on screen when there are some, every one has arrived and all are of the scale
        the viewer wants now (it drops another scale's tiles a frame after the last new one
        arrives, and a zoom may still be settling), else an empty list."""
        tiles = self.tiles()
        return tiles if tiles and all(tile["loaded"] and tile["current"] for tile in tiles) else []

    def requested(self, fragment):
        return self.driver.execute_script(
            "return performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.includes(arguments[0]))",
            fragment)

    def test_thumbnails_come_from_this_server(self):
        self.start()
        self.open("/#/search?q=cypress")
        self.wait_for_state("results")
        images = self.driver.find_elements(By.CSS_SELECTOR, "#results .card img")
        self.assertTrue(images)
        for image in images:
            self.assertRegex(image.get_attribute("src"), rf"^{re.escape(self.servers.url)}/images/CRDImages/")
            wait_until(lambda: self.loaded(image), timeout=30, message=f"{image.get_attribute('src')} did not load")
        # The widget's picture is this server's too, as /widget/timeline names it.
        self.by_id("nav-widget").click()
        face = wait_until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#widget-medium .frame img"))[0]
        entry = self.api("/widget/timeline")["entries"][0]
        self.assertRegex(entry["imageURL"], r"^/images/CRDImages/")
        self.assertEqual(face.get_attribute("src"), self.servers.url + entry["imageURL"])
        wait_until(lambda: self.loaded(face), timeout=30, message="the widget's picture did not load")

    def test_deep_zoom_fits_then_loads_the_tiles_in_view(self):
        self.start()
        self.open("/#/objects/436535")
        wait_until(lambda: self.stage().get_attribute("data-state") == "ready", timeout=60, message="no picture")
        stage = self.stage()
        info = self.api("/iiif/436535/0/info.json")
        self.assertEqual((info["width"], info["height"]), (3613, 4000))
        # Fitted: one of the picture's own sizes, no tile.
        base = self.driver.find_element(By.CSS_SELECTOR, "#detail-body .stage img.base")
        size = re.search(r"/iiif/436535/0/full/(\d+),(\d+)/0/default\.jpg$", base.get_attribute("src"))
        self.assertIsNotNone(size, base.get_attribute("src"))
        self.assertIn({"width": int(size.group(1)), "height": int(size.group(2))}, info["sizes"])
        self.assertEqual(stage.get_attribute("data-zoom"), "1.000")
        self.assertEqual(self.tiles(), [])
        self.assertEqual(self.requested("/iiif/436535/0/0,"), [])

        # Zoom in with the keyboard: the tiles of a finer scale, for the part in view only, arrive.
        stage.click()
        for _ in range(4):
            stage.send_keys("+")
        wait_until(lambda: float(stage.get_attribute("data-zoom")) > 6, message="+ did not zoom in")
        tiles = wait_until(self.arrived_tiles, timeout=60, message="the tiles in view did not all arrive")
        scale = tiles[0]["scale"]
        self.assertIn(scale, info["tiles"][0]["scaleFactors"])
        side = info["tiles"][0]["width"] * scale
        columns, rows = -(-info["width"] // side), -(-info["height"] // side)
        self.assertLess(len(tiles), columns * rows, "only the tiles in view are asked for")
        pattern = re.compile(r"/iiif/436535/0/(\d+),(\d+),(\d+),(\d+)/(\d+),(\d+)/0/default\.jpg$")
        for tile in tiles:
            x, y, w, h, width, height = map(int, pattern.search(tile["src"]).groups())
            self.assertEqual((x % side, y % side), (0, 0))
            self.assertEqual((w, h), (min(side, info["width"] - x), min(side, info["height"] - y)))
            self.assertEqual((width, height), (-(-w // scale), -(-h // scale)))
            self.assertEqual(tile["width"], width)
        self.screenshot("11-deep-zoom")

        # Arrows move the picture, and bring the tiles newly in view.
        before = set(self.requested("/iiif/436535/0/"))
        transform = self.driver.execute_script(
            "return document.querySelector('#detail-body .layer').style.transform")
        for _ in range(15):  # a box and a half: past the next column of tiles
            stage.send_keys(Keys.ARROW_RIGHT)
        wait_until(lambda: self.driver.execute_script(
            "return document.querySelector('#detail-body .layer').style.transform") != transform,
            message="the arrows did not move the picture")
        wait_until(lambda: set(self.requested("/iiif/436535/0/")) - before, message="no new tile came into view")
        wait_until(self.arrived_tiles, timeout=60, message="the tiles newly in view did not all arrive")

        # A pinch (two touches drawing apart) zooms in further; 0 fits again and drops the tiles.
        zoom = float(stage.get_attribute("data-zoom"))
        rect = self.driver.execute_script("return arguments[0].getBoundingClientRect().toJSON()", stage)
        cx, cy = rect["x"] + rect["width"] / 2, rect["y"] + rect["height"] / 2
        def touch(kind, spread):
            points = [] if kind == "touchEnd" else [
                {"x": cx - spread, "y": cy, "id": 1}, {"x": cx + spread, "y": cy, "id": 2}]
            self.driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})
        touch("touchStart", 20)
        for spread in (30, 45, 60):
            touch("touchMove", spread)
        touch("touchEnd", 0)
        wait_until(lambda: float(stage.get_attribute("data-zoom")) > zoom * 1.5, message="the pinch did not zoom")
        stage.send_keys("0")
        wait_until(lambda: stage.get_attribute("data-zoom") == "1.000" and not self.tiles(),
                   message="0 did not fit the picture again")

        # Every picture the page asked for came from this server, and every one was an image.
        for url in self.requested("/"):
            if "/iiif/" in url or "/images/" in url:
                self.assertTrue(url.startswith(self.servers.url), url)

    def test_a_picture_the_server_refuses_says_why(self):
        # A public-domain record whose picture is a truncated JPEG (one of the fake image host's
        # specimens): its info.json is a 502, and the viewer says so instead of showing a picture.
        self.allowed_errors = [r"/iiif/999002/0/info\.json .* 502"]
        self.start(fixtures=fixtures_with({
            "objectID": 999002, "primaryImage": "https://images.metmuseum.org/CRDImages/ts/original/truncated.jpg",
            "primaryImageSmall": "https://images.metmuseum.org/CRDImages/ts/original/truncated.jpg",
            "additionalImages": []}))
        self.open("/#/objects/999002")
        stage = wait_until(lambda: self.driver.find_elements(By.CSS_SELECTOR, "#detail-body .stage"))[0]
        wait_until(lambda: stage.get_attribute("data-state") == "error", timeout=60, message="no error shown")
        problem = json.loads(self.servers.get("/iiif/999002/0/info.json")[2])
        self.assertEqual(problem["code"], "upstream_malformed")
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, "#detail-body .viewer-note").text,
                         problem["title"])


def fixtures_with(*changes):
    """A copy of the fixture tree with one more object per `changes`: 436535's record with those
    members changed (`objectID` among them)."""
    fixtures = Path(tempfile.mkdtemp(prefix="fixtures-", dir=WORK))
    shutil.copytree(ROOT / "Fixtures", fixtures, dirs_exist_ok=True)
    for change in changes:
        record = json.loads((ROOT / "Fixtures/public/collection/v1/objects/436535.json").read_text())
        record.update(change)
        (fixtures / f"public/collection/v1/objects/{record['objectID']}.json").write_text(json.dumps(record))
    return fixtures


class LongTextTests(ExplorerTestCase):
    def test_a_record_with_huge_unbroken_strings_wraps(self):
        # One more object, with words of 100,000 characters in every text field shown.
        self.start(fixtures=fixtures_with({
            "objectID": 999001, "title": "Cypresses " + "W" * 100_000, "artistDisplayName": "A" * 100_000,
            "medium": "M" * 100_000, "creditLine": "C" * 100_000, "objectDate": "D" * 100_000}))

        def overflowing():
            return self.driver.execute_script(
                "return document.documentElement.scrollWidth > window.innerWidth"
                " || document.querySelector('#detail').scrollWidth > document.querySelector('#detail').clientWidth")

        self.open("/#/search?q=cypress")
        self.wait_for_state("results")
        self.assertIn(999001, self.card_ids())
        self.assertFalse(overflowing(), "the results are wider than the window")
        card = self.driver.find_element(By.CSS_SELECTOR, '#results .card[data-id="999001"]')
        self.assertLess(card.size["height"], 800, "a card shows a few lines of a huge title")

        self.open("/#/objects/999001")
        wait_until(lambda: self.by_id("detail-body").get_attribute("data-state") == "detail")
        self.assertFalse(overflowing(), "the detail view is wider than the window")
        # Shown cut to 1,000 characters: laying out 100,000 stalls the browser for seconds.
        title = self.by_id("detail-title").text.replace("\n", "")
        self.assertTrue(title.startswith("Cypresses WWW") and title.endswith("…"), title[:40])
        self.assertLessEqual(len(title), 1001)
        self.screenshot("12-huge-strings")
        self.by_id("detail-close").click()
        # Closing goes back in the history, after the click returns: a navigation started before
        # it lands can be undone by it (the widget then never shown).
        wait_until(lambda: "#/search?" in self.driver.current_url, message="closing did not show the search")

        self.open("/#/widget")
        wait_until(lambda: len(self.driver.find_elements(By.CSS_SELECTOR, "#timeline-large li")) > 1,
                   message=lambda: "the large timeline has fewer than 2 entries at "
                                   f"{self.driver.current_url}: {self.by_id('widget-status').text}")
        self.assertFalse(overflowing(), "the widget preview is wider than the window")
        for family in ("medium", "large"):
            widget = self.by_id(f"widget-{family}")
            self.assertLessEqual(widget.size["width"], 362)


class SlowAndFailingUpstreamTests(ExplorerTestCase):
    def test_stop_abandons_a_slow_search(self):
        self.start(fake=["--latency", "4000"])
        self.open("/")
        self.search("cypress")
        self.wait_for_state("loading")
        stop = self.by_id("stop")
        self.assertTrue(stop.is_enabled())
        self.assertEqual(self.by_id("status-detail").text, "Waiting for the list of matching objects.")
        stop.click()
        self.wait_for_state("stopped")
        self.assertFalse(self.by_id("stop").is_enabled())
        self.assertEqual(self.cards(), [])
        self.screenshot("07-stopped")
        # Nothing arrives later: the abandoned request's answer is not shown.
        time.sleep(4.5)
        self.assertEqual(self.state(), "stopped")
        self.assertEqual(self.cards(), [])

    def test_loading_counts_the_objects_that_arrived(self):
        # The list comes at once; each record takes 3 s, eight at a time: the first answer
        # (after the explorer's 1.5 s wait) lists the whole page as pending, and the count rises
        # at 3, 6 and 9 s. The batches are 3 s apart so that an ask delayed by a loaded machine
        # still finds some arrived and some not (1.5 s apart, one once found all 24 at once).
        self.start(fake=["--synthetic", "2000", "--latency", "3000"],
                   themet=["--upstream-rate", "1000", "--upstream-burst", "1000", "--upstream-concurrency", "8",
                           *IMAGES_UNPACED])
        self.open("/")
        self.search("landscape")
        seen = set()
        def progress():
            match = re.search(r"(\d+) of (\d+) objects arrived", self.by_id("status-detail").text)
            if match and self.state() == "loading":
                seen.add((int(match.group(1)), int(match.group(2))))
            return self.state() == "results"
        wait_until(progress, timeout=60, interval=0.05)
        self.assertTrue(any(0 < arrived < asked for arrived, asked in seen), seen)
        page = self.api("/search?q=landscape&limit=24")
        self.assertEqual(self.card_ids(), [record["objectID"] for record in page["objects"]])
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#results .card.pending"), [])

    def test_an_upstream_failure_shows_the_problem(self):
        self.allowed_errors = [r"/search\?.* 503", r"/departments .* 503"]
        self.start(fake=["--fail-rate", "1"], themet=UNPACED + ["--upstream-retries", "0"])
        self.open("/")
        self.search("cypress")
        self.wait_for_state("error")
        self.assertEqual(self.by_id("status-title").text, "Upstream unavailable")
        self.assertIn("503", self.by_id("status-detail").text)
        self.screenshot("08-error")

    def test_a_firewall_block_counts_down_then_tries_again(self):
        self.allowed_errors = [r"/search\?.* 503"]
        # The fake lets one request through (spent below on the departments), then blocks for
        # 2 s; themet pauses for 4 s after a block, and tells the page so with Retry-After.
        self.start(fake=["--block-after", "1", "--block-seconds", "2"],
                   themet=UNPACED + ["--block-cooldown", "4s", "--upstream-retries", "0"])
        self.api("/departments")
        self.open("/")
        self.search("cypress")
        self.wait_for_state("blocked")
        first = int(self.by_id("status").get_attribute("data-retry-in"))
        self.assertGreaterEqual(first, 2)
        self.assertIn(f"Trying again in {first} s", self.by_id("status-detail").text)
        self.screenshot("09-blocked")
        wait_until(lambda: (self.by_id("status").get_attribute("data-retry-in") or "0") != str(first),
                   message="the countdown did not move")
        later = self.by_id("status").get_attribute("data-retry-in")
        if later is not None:
            self.assertLess(int(later), first)
        # When it reaches 0 the search runs again, and gets past the list this time.
        wait_until(lambda: self.state() in ("loading", "results"), timeout=15)


class LocalCopyTests(ExplorerTestCase):
    """Searching this server's copy (`source=local`): by filters alone, with facets that narrow
    the search, and standing in for the Met's search when the Met cannot answer."""

    def fill(self, ids):
        """Caches the records of `ids`, and waits until the server's index holds them."""
        self.api(f"/objects?ids={','.join(map(str, ids))}&wait=30000")
        wait_until(lambda: self.api("/search?source=local&limit=1&hasImages=false")["indexed"] >= len(ids),
                   message="the index never held the records cached")
        return ids

    def test_this_servers_copy_is_searched_by_filters_with_facets_that_narrow(self):
        self.start()
        held = self.fill(sorted(int(path.stem) for path in (ROOT / "Fixtures/public/collection/v1/objects").glob("*.json")))
        self.open("/")
        self.search("", local=True)
        self.wait_for_state("results")
        status = self.by_id("status")
        self.assertEqual(status.get_attribute("data-source"), "local")
        self.assertIn(f"Searching this server’s copy ({len(held)} records).", self.by_id("status-detail").text)
        everything = self.api("/search?source=local&limit=100")
        self.assertEqual(sorted(self.card_ids()), sorted(record["objectID"] for record in everything["objects"]))
        self.assertIn("source=local", self.driver.current_url)
        self.screenshot("13-local-copy")

        buttons = self.driver.find_elements(By.CSS_SELECTOR, '#facets button[data-facet="department"]')
        self.assertTrue(buttons, "no department to narrow to")
        buttons[0].click()
        self.wait_for_results_of("departmentId=")
        department = re.search(r"departmentId=(\d+)", self.driver.current_url).group(1)
        narrowed = self.api(f"/search?source=local&limit=100&departmentId={department}")
        self.assertEqual(self.card_ids(), [record["objectID"] for record in narrowed["objects"]])
        self.assertLess(len(narrowed["objects"]), len(everything["objects"]))
        # The counts are the server's: the facet's first value is the department narrowed to.
        counts = self.driver.find_elements(By.CSS_SELECTOR, '#facets button[data-facet="department"] .count')
        self.assertEqual(counts[0].text, str(narrowed["total"]))

    def test_a_search_the_met_cannot_answer_comes_from_this_servers_copy(self):
        # The two records cost 2 requests and the page's departments 1; the 4th, the search below,
        # is blocked, and so are the thumbnails (the image host is behind the same firewall here).
        self.allowed_errors = [r"/images/.* 503"]
        self.start(fake=["--block-after", "3", "--block-seconds", "60"], themet=UNPACED + ["--upstream-retries", "0"])
        held = self.fill([436535, 437980])
        self.open("/")
        wait_until(lambda: len(self.driver.find_elements(By.CSS_SELECTOR, "#departmentId option")) > 1)
        self.search("wheat")
        self.wait_for_state("results")
        self.assertEqual(self.card_ids(), [436535])
        self.assertEqual(self.by_id("status").get_attribute("data-source"), "local")
        self.assertIn(f"The Met could not answer: these come from this server’s copy ({len(held)} records).",
                      self.by_id("status-detail").text)
        self.assertTrue(self.by_id("facets").get_attribute("hidden"))
        self.screenshot("14-local-fallback")


class WidgetTests(ExplorerTestCase):
    def test_the_widget_preview_shows_both_families_and_taps_through(self):
        self.start()
        self.open("/")
        self.search("cypress")
        self.wait_for_state("results")
        self.by_id("nav-widget").click()
        wait_until(lambda: len(self.driver.find_elements(By.CSS_SELECTOR, "#timeline-large li")) == 2)
        for family in ("medium", "large"):
            timeline = self.api(f"/widget/timeline?family={family}")
            items = self.driver.find_elements(By.CSS_SELECTOR, f"#timeline-{family} li")
            self.assertEqual(len(items), len(timeline["entries"]))
            for item, entry in zip(items, timeline["entries"]):
                self.assertEqual(item.find_element(By.TAG_NAME, "time").get_attribute("datetime"), entry["date"])
                self.assertIn(entry["title"], item.text)
            face = self.by_id(f"widget-{family}")
            self.assertIn(timeline["entries"][0]["title"], face.text)
        self.assertIn("Oil on canvas", self.by_id("widget-large").text)  # large entries carry the medium
        # Every entry's themet:// link has been resolved through /open.
        wait_until(lambda: all(link.get_attribute("data-resolved") for link in
                               self.driver.find_elements(By.CSS_SELECTOR, "#widget-view a[data-widget-url]")))
        self.screenshot("10-widget")
        entry = self.driver.find_element(By.CSS_SELECTOR, "#timeline-medium li:nth-child(2) a")
        self.assertEqual(entry.get_attribute("data-widget-url"), "themet://437980")
        self.assertEqual(entry.get_attribute("data-resolved"), "detail")
        entry.click()
        wait_until(lambda: self.by_id("detail-body").get_attribute("data-state") == "detail")
        self.assertEqual(self.by_id("detail-title").text, "Cypresses")
        # Closing comes back to the preview as it was, focus on the entry tapped, without asking again.
        asked = self.driver.execute_script(
            "return performance.getEntriesByType('resource').filter((e) => e.name.includes('/widget/timeline')).length")
        self.driver.switch_to.active_element.send_keys(Keys.ESCAPE)
        wait_until(lambda: self.driver.current_url.endswith("#/widget"))
        wait_until(lambda: self.driver.switch_to.active_element.get_attribute("data-widget-url") == "themet://437980",
                   message="focus did not come back to the entry")
        self.assertEqual(asked, self.driver.execute_script(
            "return performance.getEntriesByType('resource').filter((e) => e.name.includes('/widget/timeline')).length"))

    def test_an_empty_store_shows_the_placeholder(self):
        self.start()
        self.open("/#/widget")
        wait_until(lambda: "Search the collection" in self.by_id("widget-medium").text)
        self.assertIn("Nothing stored yet", self.by_id("widget-status").text)


if __name__ == "__main__":
    unittest.main()
