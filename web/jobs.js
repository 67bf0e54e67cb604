// Jobs: one card per job that reported steps (GET /v1/jobs), its key numbers in the card's
// summary line; an open card also shows GET /v1/jobs/ID: MFU, ETTR and effective MFU over
// time and the step time (uPlot), lost GPU-hours by cause, the straggler and the policy's
// plan, a heat map of every rank's last compute time over the median of all ranks, and the
// job's recent events.
//
// Cards are <details> elements kept by job id, so opening or closing one survives refreshes;
// only open cards are fetched in detail (openIds).

import {TimeChart, chartsAvailable, percentRange, zeroBasedRange} from './charts.js';
import {eventItem} from './events.js';
import {byName, duration, h, isNum, num, pct, replace, setAttr, setText, si, syncChildren}
    from './dom.js';

const ACTIVE = ['running', 'hung', 'restarting', 'waiting'];
const CAUSES = ['failure', 'straggler', 'hang', 'operator', 'other'];
const OPEN_BY_DEFAULT = 6;
const JOB_EVENTS = 6;

/** GPU-hours: small values keep two significant digits. */
function gpuHours(v) {
    if (!isNum(v))
        return '–';
    if (v === 0)
        return '0';
    return v < 0.1 ? v.toPrecision(2) : v.toFixed(2);
}

/**
 * The heat map colour of a rank whose compute time is ratio × the median: neutral grey up to
 * 1.0, then towards red, fully red from 1.3 (30% slower) on; null when unknown.
 */
function ratioColor(ratio) {
    if (!isNum(ratio))
        return null;
    const t = Math.min(Math.max((ratio - 1) / 0.3, 0), 1);
    const from = [56, 62, 70]; // --neutral
    const to = [248, 81, 73]; // --bad
    const c = from.map((f, i) => Math.round(f + (to[i] - f) * t));
    return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

/** "Hang watch" of a job (docs/jobs.md, "Hangs"): an announced pause, or the time without
 *  progress against the limit; nothing for a job that is not checked. */
function hangText(job) {
    const p = job.pause;
    const limit = isNum(job.hang_limit_s) ? `hang after ${duration(job.hang_limit_s)}` : '';
    if (p && typeof p === 'object')
        return `${p.kind} after step ${p.after_step}, for ${duration(p.for_s)}` +
            (limit ? ` (${limit})` : '');
    if (isNum(job.no_progress_s) && limit)
        return `no progress for ${duration(job.no_progress_s)}; ${limit}`;
    return '';
}

/** The straggler heat map: rows of consecutive ranks on one node, one cell per rank. */
class RankMap {
    constructor(el, onNode) {
        this.el = el;
        this.onNode = onNode;
        this.layout = '';
        this.cells = [];
    }

    /** ranks: the job detail's "ranks" array (rank, node, gpu, seconds, ratio). */
    update(ranks) {
        const layout = ranks.map((r) => `${r.rank}@${r.node ?? ''}`).join(',');
        if (layout !== this.layout) {
            this.layout = layout;
            this.cells = [];
            const rows = [];
            let row = null;
            for (const r of ranks) {
                const node = r.node ?? null;
                if (!row || row.node !== node) {
                    const label = node
                        ? h('button', {type: 'button', class: 'link', 'data-node-link': node,
                                       onclick: () => this.onNode(node)}, node)
                        : h('span', {class: 'muted'}, 'unknown node');
                    row = {node, cellsEl: h('div', {class: 'rank-cells'})};
                    rows.push(h('div', {class: 'rank-row'}, h('div', {class: 'rank-node'}, label),
                                row.cellsEl));
                }
                const cell = h('i', {class: 'rank', 'data-rank': r.rank});
                row.cellsEl.append(cell);
                this.cells.push(cell);
            }
            replace(this.el, rows);
        }
        ranks.forEach((r, i) => {
            const cell = this.cells[i];
            const color = ratioColor(r.ratio);
            setAttr(cell, 'data-ratio', isNum(r.ratio) ? r.ratio.toFixed(2) : '');
            if (cell.style.backgroundColor !== (color || ''))
                cell.style.backgroundColor = color || '';
            const where = `${r.node ?? '?'}${Number.isInteger(r.gpu) ? ` GPU ${r.gpu}` : ''}`;
            const secs = isNum(r.seconds) ? `${r.seconds.toFixed(3)} s` : 'no time yet';
            const ratio = isNum(r.ratio) ? `, ${r.ratio.toFixed(2)}× the median` : '';
            setAttr(cell, 'title', `rank ${r.rank} on ${where}: ${secs}${ratio}`);
        });
    }
}

/** One job's card. */
class JobCard {
    constructor(id, open, onNode, onOpen) {
        this.id = id;
        this.onNode = onNode;
        this.kpi = {
            state: h('span', {class: 'badge job-state'}),
            shape: h('span', {class: 'job-shape'}),
            mfu: h('b'),
            ettr: h('b'),
            eff: h('b'),
            step: h('span', {class: 'muted'}),
        };
        const k = this.kpi;
        this.stats = h('dl', {class: 'stats'});
        this.straggler = h('p', {class: 'straggler'});
        this.plan = h('p', {class: 'plan'});
        this.hang = h('p', {class: 'hang'});
        this.mfuEl = h('div', {class: 'chart', 'data-chart': 'mfu', 'data-job': id});
        this.stepEl = h('div', {class: 'chart', 'data-chart': 'step', 'data-job': id});
        this.lostEl = h('table', {class: 'lost'});
        this.ranksEl = h('div', {class: 'rank-map'});
        this.ranksNote = h('p', {class: 'muted'});
        this.eventsEl = h('ol', {class: 'event-list compact'});
        this.body = h('div', {class: 'job-body'},
                      h('p', {class: 'muted loading'}, 'loading…'));
        this.el = h('details', {class: 'job', 'data-job': id, open: open},
                    h('summary', {},
                      h('span', {class: 'job-id'}, `job ${id}`), k.state, k.shape,
                      h('span', {class: 'kpi'}, 'MFU ', k.mfu),
                      h('span', {class: 'kpi'}, 'ETTR ', k.ettr),
                      h('span', {class: 'kpi'}, 'effective MFU ', k.eff), k.step),
                    this.body);
        this.el.addEventListener('toggle', () => {
            if (this.el.open)
                onOpen(id);
        });
        this.charts = null;
        this.ranks = new RankMap(this.ranksEl, onNode);
        this.built = false;
    }

    /** job: an entry of GET /v1/jobs. */
    summary(job) {
        const k = this.kpi;
        setAttr(this.el, 'data-state', job.state);
        setText(k.state, job.state);
        setAttr(k.state, 'data-job-state', job.state);
        const ranks = Array.isArray(job.ranks) ? job.ranks.length : job.ranks;
        setText(k.shape, `${ranks} ranks on ${job.nodes} node${job.nodes === 1 ? '' : 's'}`);
        setText(k.mfu, pct(job.mfu));
        setText(k.ettr, pct(job.ettr));
        setText(k.eff, pct(job.effective_mfu));
        setText(k.step, `step ${job.step}`);
    }

    hangWatch(job) {
        const text = hangText(job);
        const paused = job.pause && typeof job.pause === 'object';
        setAttr(this.hang, 'data-pause', paused ? job.pause.kind : '');
        if (text)
            replace(this.hang, h('b', {}, paused ? 'Paused on purpose: ' : 'Hang watch: '), text);
        else
            replace(this.hang);
    }

    build() {
        this.charts = {
            mfu: new TimeChart(this.mfuEl, {
                height: 170,
                range: percentRange,
                axis: (v) => `${v}%`,
                series: [
                    {label: 'MFU', color: '#58a6ff', format: (v) => `${v.toFixed(1)}%`},
                    {label: 'ETTR', color: '#3fb950', format: (v) => `${v.toFixed(1)}%`},
                    {label: 'effective MFU', color: '#d2a8ff', format: (v) => `${v.toFixed(1)}%`},
                ],
            }),
            step: new TimeChart(this.stepEl, {
                height: 170,
                range: zeroBasedRange,
                axis: (v) => `${+v.toPrecision(3)} s`,
                series: [{label: 'step time', color: '#e3b341',
                          format: (v) => `${v.toFixed(3)} s`}],
            }),
        };
        const noCharts = chartsAvailable()
            ? null
            : h('p', {class: 'warn'},
                'Charts need uPlot: run scripts/web-deps.sh on the controller.');
        replace(this.body,
                this.stats, this.straggler, this.plan, this.hang, noCharts,
                h('div', {class: 'charts'},
                  h('figure', {}, h('figcaption', {}, 'MFU, ETTR and effective MFU'), this.mfuEl),
                  h('figure', {}, h('figcaption', {}, 'Step time'), this.stepEl)),
                h('div', {class: 'job-grid'},
                  h('figure', {}, h('figcaption', {}, 'Lost GPU-hours by cause'), this.lostEl),
                  h('figure', {class: 'ranks-fig'},
                    h('figcaption', {}, 'Ranks: last compute time ÷ median of all ranks'),
                    h('div', {class: 'rank-legend'},
                      h('span', {}, '≤ 1.0'), h('i', {class: 'ramp'}), h('span', {}, '1.3+'),
                      h('i', {class: 'rank', 'data-ratio': ''}), h('span', {}, 'unknown')),
                    this.ranksEl, this.ranksNote)),
                h('figure', {}, h('figcaption', {}, 'Recent events'), this.eventsEl));
        this.built = true;
    }

    /** job: GET /v1/jobs/ID .job. */
    detail(job) {
        if (!this.built)
            this.build();
        this.summary(job);
        const rankArr = Array.isArray(job.ranks) ? job.ranks : null;
        replace(this.stats,
                stat('step', `${job.step}`), stat('checkpoint', `${job.checkpoint ?? '–'}`),
                stat('step time',
                     isNum(job.step_seconds) ? `${job.step_seconds.toFixed(3)} s` : '–'),
                stat('TFLOP/s per GPU', num(job.tflops_per_gpu, 1)),
                stat('tokens/s', si(job.tokens_per_s)),
                stat('productive', duration(job.productive_s)),
                stat('wall', duration(job.wall_s)),
                stat('interruptions', `${job.interruptions ?? 0}`));

        const st = job.straggler;
        if (st && typeof st === 'object') {
            const r = rankArr ? rankArr.find((x) => x.rank === st.rank) : null;
            const gpu = r && Number.isInteger(r.gpu) ? ` GPU ${r.gpu}` : '';
            replace(this.straggler, h('b', {}, 'Straggler: '),
                    `rank ${st.rank} on `,
                    st.node ? h('button', {type: 'button', class: 'link', 'data-node-link': st.node,
                                           onclick: () => this.onNode(st.node)}, st.node) : '?',
                    `${gpu}, ${pct(st.slowdown, 0)} slower since step ${st.onset_step}`);
            setAttr(this.straggler, 'data-rank', st.rank);
        } else {
            replace(this.straggler, h('b', {}, 'Straggler: '), 'none now');
            setAttr(this.straggler, 'data-rank', '');
        }
        if (job.plan)
            replace(this.plan, h('b', {}, 'Plan: '), job.plan);
        else
            replace(this.plan);
        this.hangWatch(job);

        // The history has a point a minute at first; the job's current values end the line.
        const s = Array.isArray(job.series) ? job.series.slice() : [];
        if (isNum(job.last_report) && !(s.length && s[s.length - 1].time >= job.last_report))
            s.push({time: job.last_report, mfu: job.mfu, ettr: job.ettr,
                    step_seconds: job.step_seconds});
        const times = s.map((p) => p.time);
        const val = (v, k = 1) => (isNum(v) ? v * k : null);
        this.charts.mfu.setData([
            times,
            s.map((p) => val(p.mfu, 100)),
            s.map((p) => val(p.ettr, 100)),
            s.map((p) => (isNum(p.mfu) && isNum(p.ettr) ? p.mfu * p.ettr * 100 : null)),
        ]);
        this.charts.step.setData([times, s.map((p) => val(p.step_seconds))]);

        this.lost(job.lost_gpu_hours || {}, job.lost_seconds || {});

        if (rankArr) {
            this.ranks.update(rankArr);
            setText(this.ranksNote, rankArr.length ? '' : 'No rank has reported yet.');
        } else {
            replace(this.ranksEl);
            setText(this.ranksNote, 'This controller does not report per-rank times.');
        }

        const events = Array.isArray(job.events) ? job.events.slice(0, JOB_EVENTS) : [];
        replace(this.eventsEl, events.length ? events.map((e) => eventItem(e, this.onNode))
                                            : h('li', {class: 'muted'}, 'none'));
    }

    lost(hours, seconds) {
        const causes = CAUSES.concat(Object.keys(hours).filter((c) => !CAUSES.includes(c)).sort());
        const total = causes.reduce((a, c) => a + (isNum(hours[c]) ? hours[c] : 0), 0);
        const rows = causes.map((c) => {
            const v = isNum(hours[c]) ? hours[c] : 0;
            const bar = h('i', {class: 'bar'});
            bar.style.width = `${total > 0 ? (100 * v) / total : 0}%`;
            return h('tr', {'data-cause': c, 'data-lost': v > 0},
                     h('th', {scope: 'row'}, c), h('td', {class: 'num'}, gpuHours(v)),
                     h('td', {class: 'muted num'}, isNum(seconds[c]) ? duration(seconds[c]) : ''),
                     h('td', {class: 'bar-cell'}, bar));
        });
        replace(this.lostEl,
                h('thead', {}, h('tr', {}, h('th', {}, 'cause'), h('th', {}, 'GPU-h'),
                                 h('th', {}, 'job time'), h('th', {}, ''))),
                h('tbody', {}, rows),
                h('tfoot', {}, h('tr', {}, h('th', {scope: 'row'}, 'total'),
                                 h('td', {class: 'num'}, gpuHours(total)), h('td'), h('td'))));
    }

    fit() {
        if (this.charts) {
            this.charts.mfu.fit();
            this.charts.step.fit();
        }
    }

    destroy() {
        if (this.charts) {
            this.charts.mfu.destroy();
            this.charts.step.destroy();
        }
    }
}

function stat(label, value) {
    return h('div', {}, h('dt', {}, label), h('dd', {}, value));
}

export class JobsView {
    /** root: the #jobs section; onNode(name) opens a node; onOpen(id) asks for a refresh. */
    constructor(root, onNode, onOpen) {
        this.list = root.querySelector('.job-list');
        this.empty = root.querySelector('.empty');
        this.onNode = onNode;
        this.onOpen = onOpen;
        this.cards = new Map();
    }

    /** jobs: GET /v1/jobs .jobs. Active jobs first, newest report first. */
    update(jobs) {
        const sorted = jobs.slice().sort((a, b) => {
            const aa = ACTIVE.includes(a.state), ba = ACTIVE.includes(b.state);
            if (aa !== ba)
                return aa ? -1 : 1;
            return (b.last_report || 0) - (a.last_report || 0) || byName(a.id, b.id);
        });
        const seen = new Set();
        const els = [];
        for (const job of sorted) {
            let card = this.cards.get(job.id);
            if (!card) {
                const openNow = Array.from(this.cards.values()).filter((c) => c.el.open).length;
                const open = ACTIVE.includes(job.state) && openNow < OPEN_BY_DEFAULT;
                card = new JobCard(job.id, open, this.onNode, this.onOpen);
                this.cards.set(job.id, card);
            }
            card.summary(job);
            seen.add(job.id);
            els.push(card.el);
        }
        for (const [id, card] of this.cards) {
            if (!seen.has(id)) {
                card.destroy();
                this.cards.delete(id);
            }
        }
        this.empty.hidden = els.length > 0;
        syncChildren(this.list, els);
    }

    /** The ids of the cards that are open (their details are wanted). */
    openIds() {
        return Array.from(this.cards.values()).filter((c) => c.el.open).map((c) => c.id);
    }

    /** job: GET /v1/jobs/ID .job. */
    detail(job) {
        const card = this.cards.get(job.id);
        if (card)
            card.detail(job);
    }

    fit() {
        for (const card of this.cards.values())
            card.fit();
    }
}
