// The node panel: one node (GET /v1/nodes/NAME) with its facts, its GPUs' latest telemetry
// ("gpus", when the controller sends it), a chart of that telemetry over the time the panel
// has been open (the API keeps no per-GPU history, so the page collects it), and its
// transition history with the evidence of each decision ("history", newest first).

import {TimeChart, zeroBasedRange} from './charts.js';
import {EventList} from './events.js';
import {ago, clock, h, isNum, isTime, replace, setAttr, setText} from './dom.js';

// NVML's clocks-event (throttle) reasons, nvml.h nvmlClocksEventReason*.
const CLOCK_REASONS = [
    [0x1, 'idle'], [0x2, 'app clocks'], [0x4, 'SW power cap'], [0x8, 'HW slowdown'],
    [0x10, 'sync boost'], [0x20, 'SW thermal'], [0x40, 'HW thermal'],
    [0x80, 'power brake'], [0x100, 'display clock'],
];

/** A clocks-event reasons mask as names: 'none' for 0, '–' when unknown. */
function clockReasons(mask) {
    if (!isNum(mask))
        return '–';
    if (mask === 0)
        return 'none';
    const names = CLOCK_REASONS.filter(([bit]) => mask & bit).map(([, name]) => name);
    return names.length ? names.join(', ') : `0x${mask.toString(16)}`;
}

const HISTORY_POINTS = 600; // samples kept per node while its panel is open
const MAX_GPU_SERIES = 8;
const GPU_COLORS = ['#58a6ff', '#3fb950', '#d29922', '#f778ba', '#a371f7', '#39c5cf', '#ff7b72',
                    '#e3b341'];

function cell(v, digits = 0) {
    return isNum(v) ? v.toFixed(digits) : '–';
}

export class NodePanel {
    /** root: the #node section; onClose() closes it; onNode(name) opens another node. */
    constructor(root, onClose, onNode) {
        this.root = root;
        this.title = root.querySelector('#node-title');
        this.body = root.querySelector('.node-body');
        root.querySelector('.close').addEventListener('click', onClose);
        this.onNode = onNode;
        this.name = null;
    }

    /** Opens the panel for name (its data arrives with update), or closes it for null. */
    show(name) {
        if (name === this.name)
            return;
        if (this.chart)
            this.chart.destroy();
        this.name = name;
        this.root.hidden = !name;
        setAttr(this.root, 'data-node-detail', name || '');
        setText(this.title, name ? `Node ${name}` : 'Node');
        this.samples = [];
        this.facts = h('dl', {class: 'facts'});
        this.gpus = h('table', {class: 'gpus-table'});
        this.chartEl = h('div', {class: 'chart', 'data-chart': 'node-sm-clock'});
        this.chart = new TimeChart(this.chartEl, {
            height: 140,
            minSpan: 60,
            range: zeroBasedRange,
            axis: (v) => `${v}`,
            series: [], // set on the first sample, once the GPU count is known
        });
        this.history = h('ol', {class: 'event-list compact', 'data-history': name || ''});
        this.historyList = new EventList(this.history, null);
        this.note = h('p', {class: 'muted'});
        this.historyNote = h('p', {class: 'muted', hidden: true}, 'No events about this node yet.');
        replace(this.body, name ? h('p', {class: 'muted loading'}, 'loading…') : null);
        this.built = false;
    }

    /** The node's GET answer failed (404: no such node; other errors are the poll's). */
    missing(message) {
        replace(this.body, h('p', {class: 'warn'}, message));
        this.built = false;
    }

    /** node: GET /v1/nodes/NAME for the node shown. */
    update(node) {
        if (node.name !== this.name)
            return;
        if (!this.built) {
            replace(this.body, this.facts,
                    h('h3', {}, 'GPUs'), this.gpus, this.note,
                    h('h3', {}, 'SM clock while this panel is open (MHz)'), this.chartEl,
                    h('h3', {}, 'History'), this.historyNote, this.history);
            this.built = true;
        }
        const held = node.held ? h('span', {class: 'badge held'}, 'held for an operator') : null;
        replace(this.facts,
                fact('state', h('span', {class: 'st', 'data-state': node.state}, node.state), held),
                fact('since',
                     isTime(node.since) ? `${clock(node.since)} (${ago(node.since)})` : '–'),
                node.reason ? fact('reason', node.reason) : null,
                fact('rack', node.rack || '–'), fact('SKU', node.sku || '–'),
                fact('GPUs seen', `${node.gpus_seen} of ${node.gpus_expected}`),
                fact('drained by houston', node.drained_by_houston ? 'yes' : 'no'),
                fact('last report', isTime(node.last_seen) ? ago(node.last_seen) : 'never'));

        const gpus = Array.isArray(node.gpus) ? node.gpus : null;
        if (!gpus) {
            replace(this.gpus);
            setText(this.note, 'This controller does not report per-GPU telemetry.');
        } else {
            setText(this.note, gpus.length ? '' : 'No GPU telemetry yet.');
            replace(this.gpus,
                    h('thead', {}, h('tr', {},
                                     ['GPU', 'up', 'SM MHz', 'temp °C', 'power W', 'util %',
                                      'clock reasons'].map((t) => h('th', {}, t)))),
                    h('tbody', {}, gpus.map((g) => {
                        const down = g.lost === true || g.up === 0;
                        return h('tr', {'data-gpu': g.gpu, 'data-down': down},
                                 h('td', {}, `${g.gpu}`),
                                 h('td', {}, down ? 'down' : isNum(g.up) ? 'up' : '–'),
                                 h('td', {class: 'num'}, cell(g.sm_clock)),
                                 h('td', {class: 'num'}, cell(g.gpu_temp)),
                                 h('td', {class: 'num'}, cell(g.power)),
                                 h('td', {class: 'num'}, cell(g.util)),
                                 h('td', {}, clockReasons(g.clock_reasons)));
                    })));
            this.sample(gpus);
        }
        const history = Array.isArray(node.history) ? node.history : [];
        this.historyList.update(history);
        this.historyNote.hidden = history.length > 0;
    }

    /** Adds this poll's SM clocks to the panel's chart. */
    sample(gpus) {
        const shown = gpus.slice(0, MAX_GPU_SERIES);
        if (!shown.length)
            return;
        if (!this.chart.opts.series.length) {
            this.chart.opts.series = shown.map((g, i) => ({
                label: `GPU ${g.gpu}`,
                color: GPU_COLORS[i % GPU_COLORS.length],
                format: (v) => `${v.toFixed(0)} MHz`,
            }));
        }
        const clocks = shown.map((g) => (isNum(g.sm_clock) ? g.sm_clock : null));
        this.samples.push([Date.now() / 1000, ...clocks]);
        if (this.samples.length > HISTORY_POINTS)
            this.samples.shift();
        const n = this.chart.opts.series.length;
        const data = [this.samples.map((s) => s[0])];
        for (let i = 1; i <= n; i++)
            data.push(this.samples.map((s) => (i < s.length ? s[i] : null)));
        this.chart.setData(data);
    }

    fit() {
        if (this.chart)
            this.chart.fit();
    }
}

function fact(label, ...value) {
    return h('div', {}, h('dt', {}, label), h('dd', {}, value));
}
