// The README's "compare in the UI" screenshots, taken by clicking through MLflow's real UI in headless Chromium.
//
//   TINYGPT_STORE=/tmp/store .venv/bin/python -m lm.suite quick=true 'ablations=[scaling]'
//   TINYGPT_STORE=/tmp/store make ui PORT=5000 &
//   npm install --prefix /tmp/pw playwright-core   # only the library: it drives Debian's Chromium
//   NODE_PATH=/tmp/pw/node_modules node docs/ui-screenshots.js http://127.0.0.1:5000 quick/scaling docs
//
// (The README's pictures are of quick/scaling trained for 300 steps, validating every 30, so that the curves have
// a shape: add train.steps=300 eval.every=30 to the suite's command.)
//
// Writes docs/ui-compare.png (the runs' parameters side by side) and docs/ui-compare-val-loss.png (their curves).
const { chromium } = require('playwright-core');

(async () => {
  const [base = 'http://127.0.0.1:5000', experiment = 'scaling', out = 'docs'] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1500, height: 1000 } });
  const closeAssistant = async () => {
    const close = page.locator('button[aria-label="Close"]');
    if (await close.count()) await close.first().click();
  };

  // 1. The experiments page; switch the sidebar to "Model training" (MLflow 3 opens on GenAI).
  await page.goto(`${base}/#/experiments`);
  await page.getByText('Model training', { exact: true }).click();
  await page.waitForTimeout(1000);
  // 2. The exercise's experiment: one parent run; expand it to see a child run per variant and seed.
  await page.getByText(experiment, { exact: true }).click();
  await page.waitForTimeout(3000);
  await closeAssistant();
  await page.locator('button[data-component-id*="runnamecellrenderer"]').first().click();
  await page.waitForTimeout(1500);
  // 3. Tick the child runs and press Compare.
  const rows = page.locator('.ag-pinned-left-cols-container .ag-row');
  for (let i = 0; i < await rows.count(); i++) {
    if ((await rows.nth(i).innerText()).includes('/seed')) await rows.nth(i).locator('input[type="checkbox"]').first().check();
  }
  await page.getByRole('button', { name: 'Compare' }).click();
  await page.waitForTimeout(5000);
  await closeAssistant();
  // 4. The parameters that differ, side by side.
  await page.getByText('Visualizations').click();
  await page.getByText('Show diff only').first().click();
  await page.evaluate(() => [...document.querySelectorAll('*')].find(e => e.textContent === 'Run details').scrollIntoView());
  await page.waitForTimeout(800);
  await page.screenshot({ path: `${out}/ui-compare.png` });
  // 5. The val_loss link of the metrics table: every selected run's validation curve on one chart.
  const href = await page.getByText('train_loss', { exact: true }).first().evaluate(e => e.closest('a').href);
  await page.goto(href.replace(/train_loss/g, 'val_loss').replace('show_point=false', 'show_point=true'));
  await page.waitForTimeout(5000);
  await closeAssistant();
  await page.screenshot({ path: `${out}/ui-compare-val-loss.png` });
  console.log(`wrote ${out}/ui-compare.png and ${out}/ui-compare-val-loss.png`);
  await browser.close();
})().catch(e => { console.error(`error: ${e.message.split('\n')[0]}`); process.exit(1); });
