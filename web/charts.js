// Time-series charts, drawn by uPlot (npm "uplot", loaded by index.html as the global
// uPlot). This file only configures it: no drawing code of our own.

import {clock, isNum} from './dom.js';

/** uPlot is served from web/node_modules; false when scripts/web-deps.sh has not run. */
export function chartsAvailable() {
    return typeof globalThis.uPlot === 'function';
}

const axisStyle = {
    stroke: '#8b949e',
    grid: {stroke: '#21262d', width: 1},
    ticks: {stroke: '#30363d', width: 1},
};

/**
 * A chart of one or more series over time. el: the container (the chart fills its width);
 * opts.series: [{label, color, format(v) -> text}]; opts.range(min, max) -> [lo, hi] for the
 * y axis; opts.axis(v) -> tick label; opts.height in pixels; opts.minSpan: the x axis shows
 * at least this many seconds (120 by default).
 */
export class TimeChart {
    constructor(el, opts) {
        this.el = el;
        this.opts = opts;
        this.plot = null;
        this.zoomed = false; // the user dragged to zoom: refreshes keep the x range
    }

    width() {
        return Math.max(200, Math.floor(this.el.clientWidth || 480));
    }

    /** data: [times (Unix s), values of series 1, ...], null for unknown values. */
    setData(data) {
        if (!chartsAvailable())
            return;
        if (!this.plot) {
            const o = this.opts;
            this.plot = new globalThis.uPlot({
                width: this.width(),
                height: o.height || 160,
                cursor: {drag: {x: true, y: false}},
                legend: {live: true},
                scales: {x: {time: true,
                             range: (u, min, max) => (this.zoomed ? [min, max]
                                                      : timeRange(min, max, o.minSpan || 120))},
                         y: {range: (u, min, max) => o.range(min, max)}},
                axes: [
                    {...axisStyle, space: 80},
                    {...axisStyle, size: 56,
                     values: (u, ticks) => ticks.map((v) => (isNum(v) ? o.axis(v) : ''))},
                ],
                hooks: {
                    setSelect: [(u) => {
                        if (u.select.width > 0)
                            this.zoomed = true;
                    }],
                },
                series: [
                    {value: (u, v) => clock(v)},
                    ...o.series.map((s) => ({
                        label: s.label,
                        stroke: s.color,
                        width: 1.5,
                        value: (u, v) => (isNum(v) ? s.format(v) : '–'),
                    })),
                ],
            }, data, this.el);
            // uPlot zooms out on a double click; from then on refreshes follow the data again.
            // (Capture phase: before uPlot's own handler asks for the x range.)
            this.plot.root.addEventListener('dblclick', () => {
                this.zoomed = false;
            }, true);
        } else {
            this.plot.setData(data, !this.zoomed);
            this.fit();
        }
        this.showLatest();
    }

    /** Unless the pointer is on the chart, the legend shows the newest values. */
    showLatest() {
        const n = this.plot.data[0].length;
        const c = this.plot.cursor;
        if (n > 0 && !(c.left >= 0))
            this.plot.setLegend({idx: n - 1});
    }

    /** Follows the container's width (window resized, section opened). */
    fit() {
        if (!this.plot || !this.el.clientWidth)
            return;
        const w = this.width();
        if (Math.abs(w - this.plot.width) > 2)
            this.plot.setSize({width: w, height: this.plot.height});
    }

    destroy() {
        if (this.plot)
            this.plot.destroy();
        this.plot = null;
    }
}

/** The x range: the data's, and at least the last span seconds (a young job's few points). */
function timeRange(min, max, span) {
    if (!isNum(max))
        return [Date.now() / 1000 - span, Date.now() / 1000];
    return isNum(min) && max - min >= span ? [min, max] : [max - span, max];
}

/** The y range for ratios shown in percent: 0 to 100, or more if a value is above. */
export function percentRange(min, max) {
    return [0, Math.max(100, isNum(max) ? Math.ceil(max / 10) * 10 : 100)];
}

/** The y range for positive quantities: from 0 to a little above the largest value. */
export function zeroBasedRange(min, max) {
    return [0, isNum(max) && max > 0 ? max * 1.15 : 1];
}
