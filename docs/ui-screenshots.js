// The README's pictures of MLflow's UI, taken in headless Chromium on a fresh profile from the links `make ui` prints.
//
//   TINYGPT_STORE=/tmp/store make ablations-quick ABLATIONS=heads,scaling
//   TINYGPT_STORE=/tmp/store make ui PORT=5000 &      # prints each exercise's two links
//   npm install --prefix /tmp/pw playwright-core      # only the library: it drives Debian's Chromium
//   NODE_PATH=/tmp/pw/node_modules node docs/ui-screenshots.js LINK docs/NAME.png [section]
//
// LINK is one of the printed links; with a section name ("Seeds by variant") the page is scrolled to that chart
// section first. The README's pictures: the heads runs link (docs/ui-runs-heads.png), the heads charts link
// (docs/ui-seeds-heads.png) and the scaling charts link (docs/ui-seeds-scaling.png), all with section
// "Seeds by variant" but the first.
const { chromium } = require('playwright-core');

(async () => {
  const [link, file, section] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage({ viewport: { width: 1500, height: 1000 } });
  await page.goto(link);
  await page.waitForTimeout(12000);
  const close = page.locator('button[aria-label="Close"]');   // MLflow's assistant panel opens on a first visit
  if (await close.count()) await close.first().click();
  if (section) {
    await page.evaluate((name) => {
      const found = [...document.querySelectorAll('*')].filter(e => !e.children.length && e.textContent.trim() === name);
      found.pop().scrollIntoView();
    }, section);
  }
  if (process.env.EXPAND) {   // the parent run's child runs, one per variant and seed
    await page.locator('button[data-component-id*="runnamecellrenderer"]').first().click();
  }
  await page.waitForTimeout(2500);
  await page.screenshot({ path: file });
  console.log(`wrote ${file}`);
  await browser.close();
})().catch(e => { console.error(`error: ${e.message.split('\n')[0]}`); process.exit(1); });
