// Browser driver for tests/integration/test_dashboard.sh: opens houston's dashboard in real
// headless Chromium (Debian's package, driven by playwright-core from web/node_modules) against
// a live controller, Slurm cluster, agents and fake training job, and checks what an operator
// would see. Prints one "ok: ..." or "FAIL: ..." line per check (the shell test counts them)
// and exits non-zero when any check failed or the driver itself broke.
//
// Environment (all set by the shell test):
//   HN_DASH_URL              the dashboard, e.g. http://127.0.0.1:18087/?poll=500
//   HN_DASH_JOB              the job id of the fake trainer
//   HN_DASH_TRAINER_CONTROL  the trainer's control file ("slow 5 0.3" slows rank 5 down)
//   HN_DASH_CONTROL_PID      the controller's pid (stopped, continued, then terminated)
//   HN_DASH_SCREENSHOT       where to write the screenshot (PNG)
//   HN_WEB_DIR               web/ (its node_modules holds playwright-core)
//   HN_CHROMIUM              optional: the Chromium binary (default: Debian's)

import {existsSync, writeFileSync} from 'node:fs';
import {createRequire} from 'node:module';
import path from 'node:path';

const env = (name) => {
    const v = process.env[name];
    if (!v) {
        console.log(`FAIL: ${name} is not set (run tests/integration/test_dashboard.sh)`);
        process.exit(2);
    }
    return v;
};
const url = env('HN_DASH_URL');
const job = env('HN_DASH_JOB');
const trainerControl = env('HN_DASH_TRAINER_CONTROL');
const controlPid = Number(env('HN_DASH_CONTROL_PID'));
const screenshot = env('HN_DASH_SCREENSHOT');
const webDir = env('HN_WEB_DIR');
const origin = new URL(url).origin;

// Debian 12's chromium package: /usr/bin/chromium is a shell wrapper that execs this binary
// (and prints noise from its /etc/chromium.d snippets); playwright starts the binary itself.
const chromiumCandidates = [process.env.HN_CHROMIUM, '/usr/lib/chromium/chromium',
                            '/usr/bin/chromium'].filter(Boolean);
const executablePath = chromiumCandidates.find((p) => existsSync(p));
if (!executablePath) {
    console.log('FAIL: Chromium not found: apt-get install chromium (or run scripts/install-deps.sh)');
    process.exit(2);
}

let chromium;
try {
    chromium = createRequire(path.join(webDir, 'package.json'))('playwright-core').chromium;
} catch (e) {
    console.log(`FAIL: playwright-core is not installed in ${webDir}/node_modules: ` +
                `run scripts/web-deps.sh (${e.message})`);
    process.exit(2);
}

let failed = 0;
function ok(what) {
    console.log(`ok: ${what}`);
}
function fail(what) {
    console.log(`FAIL: ${what}`);
    failed++;
}
/**
 * Passes only when fn() resolves truthy (null, undefined, 0 and '' fail too); a thrown error
 * (e.g. a timeout) fails with its message.
 */
async function check(what, fn) {
    try {
        const r = await fn();
        if (!r)
            fail(what);
        else
            ok(what);
        return r;
    } catch (e) {
        fail(`${what}: ${String(e.message || e).split('\n')[0]}`);
        return false;
    }
}
/** In the page: nothing of the hostile drain reason and user became an element or ran. */
function noMarkup() {
    return window.hnPwned === undefined && !document.querySelector('img, script:not([src])') &&
           !Array.from(document.querySelectorAll('b')).some((b) => b.textContent === 'mallory');
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function api(p) {
    const res = await fetch(origin + p);
    if (!res.ok)
        throw new Error(`${p}: ${res.status}`);
    return res.json();
}

/** Waits until the job's checkpoint advances, so that the next one is a whole interval away. */
async function waitForFreshCheckpoint(timeoutMs) {
    const start = Date.now();
    const first = (await api(`/v1/jobs/${job}`)).job.checkpoint;
    while (Date.now() - start < timeoutMs) {
        const now = (await api(`/v1/jobs/${job}`)).job.checkpoint;
        if (now !== first)
            return now;
        await sleep(50);
    }
    throw new Error(`checkpoint stayed at ${first}`);
}

const browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
// Everything the page does is recorded: console messages above info, uncaught errors,
// requests that failed or answered 4xx/5xx, and any request that leaves the controller.
const problems = [];
let expectOutage = false; // while the controller is stopped on purpose
const outage = {console: 0, failed: 0};
try {
    const context = await browser.newContext({viewport: {width: 1480, height: 1100}});
    const page = await context.newPage();
    page.on('console', (m) => {
        if (m.type() !== 'error' && m.type() !== 'warning')
            return;
        // The browser's own line for a request that could not connect (not the page's code).
        if (expectOutage && /Failed to load resource|ERR_/.test(m.text())) {
            outage.console++;
            return;
        }
        problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
    page.on('requestfailed', (r) => {
        if (expectOutage) {
            outage.failed++;
            return;
        }
        problems.push(`request failed: ${r.url()} ${r.failure() ? r.failure().errorText : ''}`);
    });
    page.on('response', (r) => {
        if (r.status() >= 400)
            problems.push(`HTTP ${r.status()}: ${r.url()}`);
    });
    page.on('request', (r) => {
        if (!r.url().startsWith(origin) && !r.url().startsWith('data:'))
            problems.push(`external request: ${r.url()}`);
    });

    await check(`the dashboard loads (${url})`, async () => {
        const res = await page.goto(url, {waitUntil: 'load'});
        return res && res.status() === 200;
    });
    await check('the status line says live', () =>
        page.waitForSelector('#status[data-status="live"]', {timeout: 10000}));
    await check('uPlot is loaded from web/node_modules', () =>
        page.evaluate(() => typeof window.uPlot === 'function'));

    await check('the fleet view shows 4 nodes in 2 racks', async () => {
        await page.waitForFunction(() => document.querySelectorAll('#fleet [data-node]').length === 4,
                                   null, {timeout: 10000});
        return (await page.locator('#fleet .rack').count()) === 2;
    });
    await check('every node is ready', () =>
        page.waitForFunction(() =>
            document.querySelectorAll('#fleet [data-node][data-state="ready"]').length === 4,
        null, {timeout: 10000}));
    await check('the summary counts 4 nodes, 4 ready', async () => {
        const nodes = await page.textContent('[data-summary="nodes"] .value');
        const ready = await page.textContent('[data-summary-state="ready"] .value');
        return nodes === '4' && ready === '4';
    });
    const card = `#jobs details[data-job="${job}"]`;
    await check(`job ${job} has a card, open, with 8 ranks`, async () => {
        await page.waitForSelector(`${card}[open]`, {timeout: 10000});
        return /8 ranks on 2 nodes/.test(await page.textContent(`${card} summary`));
    });
    await check('the job\'s MFU chart is a uPlot canvas', () =>
        page.waitForSelector(`${card} [data-chart="mfu"] .uplot canvas`, {timeout: 15000}));
    await check('the MFU chart has a legend with MFU, ETTR and effective MFU', async () => {
        const legend = await page.textContent(`${card} [data-chart="mfu"] .u-legend`);
        return /MFU/.test(legend) && /ETTR/.test(legend) && /effective MFU/.test(legend);
    });
    await check('the summary shows the job\'s MFU (about 40%)', async () => {
        await page.waitForFunction(() => /%/.test(
            document.querySelector('[data-summary="mfu"] .value').textContent), null, {timeout: 10000});
        const v = parseFloat(await page.textContent('[data-summary="mfu"] .value'));
        return v > 35 && v < 45;
    });
    await check('the heat map has one cell per rank, none slow yet', async () => {
        await page.waitForFunction((sel) => document.querySelectorAll(`${sel} i.rank[data-rank]`).length === 8,
                                   card, {timeout: 10000});
        const ratios = await page.$$eval(`${card} i.rank[data-rank]`,
                                         (cells) => cells.map((c) => parseFloat(c.dataset.ratio)));
        return ratios.every((r) => !(r > 1.15));
    });

    // A checkpoint save the job announces (fake_trainer.py's "save"): the card says so while
    // it lasts, then shows the hang watch again.
    writeFileSync(trainerControl, 'save 4\n');
    await check('an announced checkpoint save is shown as a pause on purpose', () =>
        page.waitForFunction((sel) => {
            const p = document.querySelector(`${sel} .hang`);
            return p && p.dataset.pause === 'checkpoint' &&
                /Paused on purpose: checkpoint after step \d+, for .*hang after 45 min/.test(p.textContent);
        }, card, {timeout: 10000}));
    await check('after the save, the hang watch is back', () =>
        page.waitForFunction((sel) => {
            const p = document.querySelector(`${sel} .hang`);
            return p && p.dataset.pause === '' && /Hang watch: no progress for/.test(p.textContent);
        }, card, {timeout: 15000}));

    // The test drained n3 with a reason full of markup: it is shown as text, nothing ran.
    await check('an operator\'s reason full of markup is shown as text', () =>
        page.waitForFunction(() => Array.from(document.querySelectorAll('#events .event-list li'))
            .some((li) => li.textContent.includes('<img src=x onerror=')), null, {timeout: 10000}));
    await check('no markup from the API became elements, no script ran', () =>
        page.evaluate(noMarkup));

    // Every data-state n2's cell takes from now on, in order (polls are 0.5 s apart, so the
    // list shows what an operator watching the screen saw).
    await page.evaluate(() => {
        window.hnStates = [];
        const cell = document.querySelector('#fleet [data-node="n2"]');
        const note = () => {
            const s = cell.getAttribute('data-state');
            if (window.hnStates[window.hnStates.length - 1] !== s)
                window.hnStates.push(s);
        };
        note();
        new MutationObserver(note).observe(cell, {attributes: true, attributeFilter: ['data-state']});
    });

    // Slow rank 5 (n2, GPU 1) right after a checkpoint: the straggler policy drains n2 at the
    // next one, so n2 stays suspect for most of a checkpoint interval.
    const ckpt = await check('the job takes checkpoints', () => waitForFreshCheckpoint(40000));
    writeFileSync(trainerControl, 'slow 5 0.3\n');
    console.log(`rank 5 made 30% slower after checkpoint ${ckpt}`);
    const t0 = Date.now();

    await check('n2 is shown as suspect', () =>
        page.waitForSelector('#fleet [data-node="n2"][data-state="suspect"]', {timeout: 30000}));
    console.log(`suspect on screen ${((Date.now() - t0) / 1000).toFixed(1)} s after the slowdown`);
    await check('the job names the straggler: rank 5 on n2', () =>
        page.waitForFunction((sel) => {
            const p = document.querySelector(`${sel} .straggler`);
            return p && p.dataset.rank === '5' && /rank 5 on n2/.test(p.textContent);
        }, card, {timeout: 5000}));
    await check('the summary counts 1 suspect node', () =>
        page.waitForFunction(() =>
            document.querySelector('[data-summary-state="suspect"] .value').textContent === '1',
        null, {timeout: 5000}));

    await page.click('#fleet [data-node="n2"]');
    await check('clicking n2 opens its panel', () =>
        page.waitForSelector('#node[data-node-detail="n2"]:not([hidden])', {timeout: 5000}));
    await check('the panel shows n2\'s state as the fleet view does', () =>
        page.waitForFunction(() => {
            const cell = document.querySelector('#fleet [data-node="n2"]').dataset.state;
            const st = document.querySelector('#node .facts .st');
            return st && st.dataset.state === cell && ['suspect', 'draining'].includes(cell);
        }, null, {timeout: 5000}));
    await check('n2\'s history shows the straggler finding with its evidence (rank=5)', () =>
        page.waitForFunction(() => Array.from(
            document.querySelectorAll('#node [data-history] li[data-rule="straggler"]'))
            .some((li) => /rank=5/.test(li.querySelector('.ev-evidence')?.textContent || '')),
        null, {timeout: 10000}));
    await check('n2\'s history shows the transition ready → suspect', () =>
        page.waitForFunction(() => Array.from(
            document.querySelectorAll('#node [data-history] li[data-kind="transition"]'))
            .some((li) => /ready\s*→\s*suspect/.test(li.textContent)),
        null, {timeout: 10000}));
    await check('n2\'s panel lists its GPUs', async () => {
        await page.waitForSelector('#node .gpus-table tbody tr', {timeout: 5000});
        return (await page.locator('#node .gpus-table tbody tr').count()) >= 1;
    });
    await check('the job shows the plan to drain n2 at the next checkpoint', () =>
        page.waitForFunction((sel) => /drain n2 at the next checkpoint/.test(
            document.querySelector(`${sel} .plan`).textContent), card, {timeout: 10000}));
    // ratioColor (web/jobs.js) goes from grey rgb(56, 62, 70) at ratio 1.0 to red
    // rgb(248, 81, 73) at 1.3: from 1.2 on the red channel is at least 184 and green and blue
    // stay under 90, which neither the grey of a normal rank nor an empty style passes.
    await check('rank 5\'s heat-map cell is red (ratio ≥ 1.2)', () =>
        page.waitForFunction((sel) => {
            const c = document.querySelector(`${sel} i.rank[data-rank="5"]`);
            if (!c || !(parseFloat(c.dataset.ratio) >= 1.2))
                return false;
            const m = /^rgb\((\d+), (\d+), (\d+)\)$/.exec(c.style.backgroundColor);
            return m !== null && Number(m[1]) >= 180 && Number(m[2]) < 90 && Number(m[3]) < 90;
        }, card, {timeout: 10000}));
    await check('the events list shows the straggler event', () =>
        page.waitForFunction(() => Array.from(
            document.querySelectorAll('#events .event-list li[data-rule="straggler"]'))
            .some((li) => /rank=5/.test(li.textContent)), null, {timeout: 10000}));

    await check('n2 is then shown as draining', () =>
        page.waitForSelector('#fleet [data-node="n2"][data-state="draining"]', {timeout: 60000}));
    console.log(`draining on screen ${((Date.now() - t0) / 1000).toFixed(1)} s after the slowdown`);
    await check('n2 went ready → suspect → draining on screen', async () => {
        const seen = await page.evaluate(() => window.hnStates);
        console.log(`n2's states on screen: ${seen.join(' → ')}`);
        return seen.join(',').startsWith('ready,suspect,draining');
    });
    await check('n2\'s history shows the transition suspect → draining', () =>
        page.waitForFunction(() => Array.from(
            document.querySelectorAll('#node [data-history] li[data-kind="transition"]'))
            .some((li) => /suspect\s*→\s*draining/.test(li.textContent)),
        null, {timeout: 10000}));
    await check('the events list shows the drain action', () =>
        page.waitForSelector('#events .event-list li[data-kind="action"]', {timeout: 10000}));
    await check('lost GPU-hours are charged to the straggler', async () => {
        try {
            return await page.waitForSelector(
                `${card} table.lost tr[data-cause="straggler"][data-lost="true"]`, {timeout: 10000});
        } catch (e) {
            const j = (await api(`/v1/jobs/${job}`)).job;
            console.log(`  the API says: state ${j.state}, lost_gpu_hours ${JSON.stringify(j.lost_gpu_hours)}`);
            throw e;
        }
    });

    await page.screenshot({path: screenshot, fullPage: true});
    console.log(`screenshot: ${screenshot}`);

    await check('still no markup from the API became elements', () =>
        page.evaluate(noMarkup));
    await check('no console error or warning, no failed request', () => {
        for (const p of problems)
            console.log(`  ${p}`);
        return problems.length === 0;
    });

    // The controller stops answering (SIGSTOP): the page says so and keeps the last picture;
    // it recovers by itself once the controller answers again (SIGCONT).
    expectOutage = true;
    process.kill(controlPid, 'SIGSTOP');
    await check('a stopped controller shows "controller unreachable"', async () => {
        try {
            await page.waitForSelector('#status[data-status="down"]', {timeout: 15000});
        } finally {
            process.kill(controlPid, 'SIGCONT');
        }
        return /controller unreachable/.test(await page.textContent('#status'));
    });
    await check('the fleet stays on screen while unreachable', async () =>
        (await page.locator('#fleet [data-node]').count()) === 4);
    await check('the page recovers when the controller answers again', () =>
        page.waitForSelector('#status[data-status="live"]', {timeout: 15000}));
    // A controller that is gone: the connection is refused, the page keeps retrying.
    process.kill(controlPid, 'SIGTERM');
    await check('a terminated controller shows "controller unreachable"', async () => {
        await page.waitForSelector('#status[data-status="down"]', {timeout: 15000});
        return /controller unreachable/.test(await page.textContent('#status'));
    });
    await sleep(1500);
    await check('no page error while the controller was away', () => {
        for (const p of problems)
            console.log(`  ${p}`);
        return problems.length === 0;
    });
    console.log(`while away: ${outage.failed} requests failed, ${outage.console} browser network lines`);
} catch (e) {
    fail(`driver: ${e.stack || e}`);
} finally {
    await browser.close();
}
process.exit(failed ? 1 : 0);
