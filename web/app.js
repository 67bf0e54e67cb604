// houston's dashboard: polls the controller's JSON API (docs/api.md) and shows the fleet, the
// jobs, a node's panel and the live event list (docs/dashboard.md).
//
// One poll at a time: nodes, racks, jobs and the newest events, then the details of the open
// job cards and of the open node, then the views are updated in place. A poll that fails
// leaves the last picture on screen and says "controller unreachable" in the status line;
// the next poll retries. Nothing is written to the console: errors go to the status line.
//
// ?poll=MS in the page's URL changes the interval (200 ms to 60 s; 2 s by default);
// #node=NAME opens a node's panel.

import {ApiError, getJSON} from './api.js';
import {clock, h, isNum, pct, replace} from './dom.js';
import {EventList} from './events.js';
import {FleetView} from './fleet.js';
import {JobsView} from './jobs.js';
import {NodePanel} from './node.js';

const STATES = ['new', 'burnin', 'ready', 'suspect', 'draining', 'quarantined', 'repair',
                'retired'];
const ACTIVE_JOBS = ['running', 'hung', 'restarting', 'waiting'];
const EVENTS_SHOWN = 50;

function pollInterval() {
    const v = Number(new URLSearchParams(location.search).get('poll'));
    return Number.isFinite(v) && v > 0 ? Math.min(Math.max(v, 200), 60000) : 2000;
}

const el = {
    status: document.getElementById('status'),
    summary: document.getElementById('summary'),
    eventsEmpty: document.querySelector('#events .empty'),
};

const state = {
    interval: pollInterval(),
    timer: null,
    running: false,
    again: false,
    lastOk: null,
    selected: null,
};

const fleet = new FleetView(document.getElementById('fleet'), select);
const jobs = new JobsView(document.getElementById('jobs'), select, () => refreshSoon());
const panel = new NodePanel(document.getElementById('node'), () => select(null), select);
const events = new EventList(document.querySelector('#events .event-list'), select);

/** Opens the panel of node name (null closes it) and remembers it in the URL. */
function select(name) {
    state.selected = name || null;
    fleet.select(state.selected);
    panel.show(state.selected);
    const hash = state.selected ? `#node=${encodeURIComponent(state.selected)}` : '';
    if (location.hash !== hash)
        history.replaceState(null, '', hash || `${location.pathname}${location.search}`);
    refreshSoon();
}

function selectedFromHash() {
    const m = /^#node=(.+)$/.exec(location.hash);
    if (!m)
        return null;
    try {
        return decodeURIComponent(m[1]);
    } catch {
        return null;
    }
}

/** The numbers at the top: nodes by state, racks degraded, held nodes, jobs and their MFU. */
function renderSummary(nodes, racks, jobList) {
    const count = new Map(STATES.map((s) => [s, 0]));
    for (const n of nodes)
        count.set(n.state, (count.get(n.state) || 0) + 1);
    const held = nodes.filter((n) => n.held).length;
    const degraded = racks.filter((r) => r.degraded).length;
    const active = jobList.filter((j) => ACTIVE_JOBS.includes(j.state));
    // Fleet figures: each job weighted by its ranks (GPUs), over the jobs that know a value.
    const weighted = (key) => {
        let sum = 0, w = 0;
        for (const j of active) {
            if (isNum(j[key]) && j.ranks > 0) {
                sum += j[key] * j.ranks;
                w += j.ranks;
            }
        }
        return w > 0 ? sum / w : null;
    };
    const figure = (label, value, attrs = {}) =>
        h('div', {class: 'figure', ...attrs}, h('span', {class: 'value'}, value),
          h('span', {class: 'label'}, label));
    replace(el.summary,
            h('div', {class: 'group', 'aria-label': 'nodes by state'},
              figure('nodes', nodes.length, {'data-summary': 'nodes'}),
              Array.from(count, ([s, c]) =>
                  figure(s, c, {'data-summary-state': s, 'data-state': s,
                                class: c ? 'figure' : 'figure zero'})),
              figure('held', held,
                     {'data-summary': 'held', class: held ? 'figure held' : 'figure zero'})),
            h('div', {class: 'group', 'aria-label': 'racks'},
              figure('racks degraded', `${degraded}/${racks.length}`,
                     {'data-summary': 'racks-degraded',
                      class: degraded ? 'figure bad' : 'figure'})),
            h('div', {class: 'group', 'aria-label': 'jobs'},
              figure('jobs active', `${active.length}/${jobList.length}`, {'data-summary': 'jobs'}),
              figure('MFU', pct(weighted('mfu')), {'data-summary': 'mfu'}),
              figure('ETTR', pct(weighted('ettr')), {'data-summary': 'ettr'}),
              figure('effective MFU', pct(weighted('effective_mfu')),
                     {'data-summary': 'effective-mfu'})));
}

function setStatus(kind, text) {
    el.status.setAttribute('data-status', kind);
    el.status.textContent = text;
}

/** One poll of the API; updates every view or the status line. */
async function poll() {
    const [nodes, racks, jobList, recent] = await Promise.all([
        getJSON('/v1/nodes'), getJSON('/v1/racks'), getJSON('/v1/jobs'),
        getJSON(`/v1/events?limit=${EVENTS_SHOWN}`),
    ]);
    fleet.update(nodes.nodes || [], racks.racks || []);
    jobs.update(jobList.jobs || []);
    renderSummary(nodes.nodes || [], racks.racks || [], jobList.jobs || []);
    events.update(recent.events || []);
    el.eventsEmpty.hidden = (recent.events || []).length > 0;

    // Details: a job forgotten since the list (404) is skipped; the node's 404 is shown.
    const wanted = jobs.openIds();
    const node = state.selected;
    const unless404 = (value) => (e) => (e.status === 404 ? value : Promise.reject(e));
    const [details, nodeDetail] = await Promise.all([
        Promise.all(wanted.map((id) => getJSON(`/v1/jobs/${encodeURIComponent(id)}`)
                                           .catch(unless404(null)))),
        node ? getJSON(`/v1/nodes/${encodeURIComponent(node)}`)
                   .catch(unless404({missing: true}))
             : null,
    ]);
    for (const d of details) {
        if (d && d.job)
            jobs.detail(d.job);
    }
    if (node && node === state.selected && nodeDetail) {
        if (nodeDetail.missing)
            panel.missing(`No such node: ${node}`);
        else
            panel.update(nodeDetail);
    }
}

async function tick() {
    state.timer = null;
    if (state.running) {
        state.again = true;
        return;
    }
    state.running = true;
    try {
        await poll();
        state.lastOk = Date.now() / 1000;
        setStatus('live', `live · updated ${clock(state.lastOk)}`);
    } catch (e) {
        const last = state.lastOk ? ` · last update ${clock(state.lastOk)}` : '';
        if (e instanceof ApiError && e.unreachable)
            setStatus('down', `controller unreachable (${e.message}) · retrying${last}`);
        else
            setStatus('error', `error: ${e && e.message ? e.message : String(e)}${last}`);
    } finally {
        state.running = false;
        schedule(state.again ? 0 : state.interval);
        state.again = false;
    }
}

function schedule(ms) {
    if (state.timer !== null)
        clearTimeout(state.timer);
    state.timer = setTimeout(tick, ms);
}

/** A refresh now (a card opened, a node selected) instead of at the next interval. */
function refreshSoon() {
    if (state.running)
        state.again = true;
    else
        schedule(0);
}

let resizeTimer = null;
window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
        jobs.fit();
        panel.fit();
    }, 150);
});
window.addEventListener('hashchange', () => {
    const name = selectedFromHash();
    if (name !== state.selected)
        select(name);
});

const initial = selectedFromHash();
if (initial)
    select(initial);
else
    schedule(0);
