// Loads a `coldgate history page` in headless Chromium (Debian's, driven by playwright-core)
// and reports what the page did, as one JSON document on stdout; the caller
// (tests/history/page_test.cpp) asserts it. Nothing of the page is overridden: the network is
// refused (every request but file: is aborted and listed), console errors, page errors and
// dialogs are collected, and the charts are read through Chart.js's own API after the scripts
// ran. Then, as a user would: hover the last point of the first chart (the tooltip), take the
// screenshot, switch the metric select to its second option, uncheck the last stage, and click
// the last point of the first chart (the commit it opens is the only request expected).
//
//   node tests/history/page_browser.mjs PAGE.html SHOT.png
//
// Exit 0 with the verdict on stdout once the page was observed, whatever it showed; 2 when the
// browser or playwright-core is missing or the page could not be driven (the message on stderr).
// playwright-core comes from build-tools/node_modules (ci/setup.sh --test) or
// $COLDGATE_NODE_MODULES; the browser is /usr/bin/chromium or $COLDGATE_CHROMIUM.
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = process.env.COLDGATE_NODE_MODULES || path.join(here, "..", "..", "build-tools", "node_modules");
const executable = process.env.COLDGATE_CHROMIUM || "/usr/bin/chromium";

function fail(message) {
  process.stderr.write(`page_browser: ${message}\n`);
  process.exit(2);
}

const [pageFile, shotFile] = process.argv.slice(2);
if (!pageFile || !shotFile) fail("usage: node page_browser.mjs PAGE.html SHOT.png");
if (!fs.existsSync(executable)) fail(`no browser at ${executable}: apt-get install chromium (ci/setup.sh --test)`);
let chromium;
try {
  ({ chromium } = createRequire(path.join(modules, "index.js"))("playwright-core"));
} catch (e) {
  fail(`playwright-core is not installed in ${modules} (run ci/setup.sh --test): ${e.message}`);
}

const verdict = {
  console_errors: [], page_errors: [], dialogs: [], requests_before_click: [], click_requests: [],
};
let clicked = false;
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "coldgate-chromium-"));
let context;
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: executable,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run"],
    viewport: { width: 1200, height: 900 },
    deviceScaleFactor: 1,
  });
  await context.route("**", (route) => {
    const url = route.request().url();
    if (url.startsWith("file:")) return route.continue();
    (clicked ? verdict.click_requests : verdict.requests_before_click).push(url);
    return route.abort();
  });
  const page = context.pages()[0] || (await context.newPage());
  page.on("console", (m) => { if (m.type() === "error") verdict.console_errors.push(m.text()); });
  page.on("pageerror", (e) => verdict.page_errors.push(String(e)));
  page.on("dialog", (d) => { verdict.dialogs.push(`${d.type()}: ${d.message()}`); d.dismiss().catch(() => {}); });

  await page.goto(pathToFileURL(path.resolve(pageFile)).href, { waitUntil: "load" });

  // What the scripts built, read from the DOM and from Chart.js.
  const charts = () => page.evaluate(() => [...document.querySelectorAll("section.stage")].map((s) => {
    const canvases = s.querySelectorAll("canvas");
    const chart = canvases.length === 1 && window.Chart ? window.Chart.getChart(canvases[0]) : null;
    return {
      stage: s.dataset.stage,
      heading: s.querySelector("h2")?.textContent ?? null,
      visible: !s.hidden && s.getBoundingClientRect().height > 0,
      canvases: canvases.length,
      chart: chart !== null && chart !== undefined,
      labels: chart ? chart.data.labels : [],
      datasets: chart ? chart.data.datasets.map((d) => ({ label: d.label, data: d.data })) : [],
      y_title: chart ? chart.options.scales.y.title.text : null,
    };
  }));
  verdict.title = await page.title();
  verdict.empty_text = await page.evaluate(() => document.getElementById("empty")?.textContent ?? null);
  verdict.sections = await charts();
  verdict.img_elements = await page.evaluate(() => document.querySelectorAll("img").length);
  verdict.commit_rows = await page.evaluate(() => [...document.querySelectorAll("#commits tbody tr")].map((tr) => ({
    cells: [...tr.children].map((td) => td.textContent),
    link: tr.querySelector("td.sha a")?.href ?? null,
  })));
  verdict.metric_options = await page.evaluate(() => [...document.querySelectorAll("#metric option")].map((o) => o.value));
  verdict.stage_boxes = await page.evaluate(() => [...document.querySelectorAll("#stages input[type=checkbox]")].map((i) => i.value));

  if (verdict.sections.length > 0 && verdict.sections[0].chart) {
    // The last point of the first chart, at its pixel on the page.
    const at = async () => page.evaluate(() => {
      const canvas = document.querySelector("section.stage canvas");
      const chart = window.Chart.getChart(canvas);
      const points = chart.getDatasetMeta(0).data;
      const p = points[points.length - 1];
      const box = canvas.getBoundingClientRect();
      return { x: box.left + p.x, y: box.top + p.y, index: points.length - 1 };
    });
    let point = await at();
    await page.mouse.move(point.x, point.y);
    verdict.tooltip = await page.evaluate(() => {
      const chart = window.Chart.getChart(document.querySelector("section.stage canvas"));
      const t = chart.tooltip;
      return {
        active: t.getActiveElements().map((e) => ({ dataset: e.datasetIndex, index: e.index })),
        title: t.title,
        body: t.body.flatMap((b) => [...b.before, ...b.lines, ...b.after]),
        footer: t.footer,
      };
    });
    verdict.tooltip.hovered = point.index;
    await page.screenshot({ path: shotFile, fullPage: true });

    if (verdict.metric_options.length > 1) {
      verdict.switched_to = verdict.metric_options[1];
      await page.selectOption("#metric", verdict.switched_to);
      verdict.after_switch = await charts();
    }
    if (verdict.stage_boxes.length > 0) {
      verdict.unchecked = verdict.stage_boxes[verdict.stage_boxes.length - 1];
      await page.uncheck(`#stages input[type=checkbox] >> nth=${verdict.stage_boxes.length - 1}`);
      verdict.after_uncheck = await charts();
    }

    // The click: the commit opens in a new tab, whose navigation is the only request expected
    // (aborted above, which is when it is listed).
    point = await at();
    clicked = true;
    const opened = context.waitForEvent("requestfailed", { predicate: (r) => !r.url().startsWith("file:"), timeout: 15000 })
      .then((r) => r.url(), () => null);
    await page.mouse.click(point.x, point.y);
    verdict.clicked = point.index;
    verdict.opened = await opened;
  } else {
    await page.screenshot({ path: shotFile, fullPage: true });
  }
} catch (e) {
  if (context) await context.close().catch(() => {});
  fs.rmSync(profile, { recursive: true, force: true });
  fail(e.stack || String(e));
}
await context.close();
fs.rmSync(profile, { recursive: true, force: true });
process.stdout.write(JSON.stringify(verdict, null, 2) + "\n");
