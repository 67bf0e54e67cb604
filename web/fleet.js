// Fleet view: every rack (GET /v1/racks) as a grid of its nodes (GET /v1/nodes), each node a
// button coloured by its lifecycle state with one small square per expected GPU (the ones
// not seen drawn as missing). Held nodes are marked. Clicking a node opens its panel.
//
// Elements are kept by name and only their attributes change from one poll to the next, so
// a click never lands on an element that a refresh just replaced. data-node / data-state /
// data-held on each node button are the contract the browser test reads.

import {byName, h, isTime, replace, setAttr, setText, syncChildren} from './dom.js';

function nodeTitle(n) {
    const parts = [`${n.name}: ${n.state}`];
    if (n.held)
        parts.push('removal held for an operator');
    if (n.reason)
        parts.push(n.reason);
    if (n.gpus_seen !== n.gpus_expected)
        parts.push(`${n.gpus_seen} of ${n.gpus_expected} GPUs seen`);
    return parts.join(' — ');
}

export class FleetView {
    /** root: the #fleet section; onSelect(name) opens a node. */
    constructor(root, onSelect) {
        this.racksEl = root.querySelector('.racks');
        this.onSelect = onSelect;
        this.racks = new Map(); // name -> {el, head, count, grid}
        this.nodes = new Map(); // name -> {el, label, gpus, gpuSig}
        this.selected = null;
    }

    rack(name) {
        let r = this.racks.get(name);
        if (!r) {
            const count = h('span', {class: 'rack-count'});
            const badge = h('span', {class: 'badge degraded'}, 'degraded');
            const grid = h('div', {class: 'nodes'});
            const el = h('div', {class: 'rack', 'data-rack': name},
                         h('div', {class: 'rack-head'},
                           h('span', {class: 'rack-name'}, name || '(no rack)'), count, badge),
                         grid);
            r = {el, count, grid};
            this.racks.set(name, r);
        }
        return r;
    }

    node(name) {
        let n = this.nodes.get(name);
        if (!n) {
            const gpus = h('span', {class: 'gpus', 'aria-hidden': 'true'});
            const el = h('button', {type: 'button', class: 'node', 'data-node': name,
                                    'aria-pressed': 'false', onclick: () => this.onSelect(name)},
                         h('span', {class: 'node-name'}, name), gpus);
            n = {el, gpus, gpuSig: ''};
            this.nodes.set(name, n);
        }
        return n;
    }

    /** nodes: GET /v1/nodes .nodes; racks: GET /v1/racks .racks. */
    update(nodes, racks) {
        const byRack = new Map();
        for (const r of racks)
            byRack.set(r.name, []);
        for (const n of nodes) {
            if (!byRack.has(n.rack))
                byRack.set(n.rack, []);
            byRack.get(n.rack).push(n);
        }
        const rackInfo = new Map(racks.map((r) => [r.name, r]));
        const rackEls = [];
        const seenNodes = new Set();
        for (const name of Array.from(byRack.keys()).sort(byName)) {
            const r = this.rack(name);
            const members = byRack.get(name).sort((a, b) => byName(a.name, b.name));
            const info = rackInfo.get(name);
            const inProduction = (n) => n.state === 'ready' || n.state === 'suspect';
            const prod = info ? info.in_production : members.filter(inProduction).length;
            setText(r.count, `${prod}/${info ? info.nodes : members.length} in production`);
            setAttr(r.el, 'data-degraded', Boolean(info && info.degraded));
            const els = members.map((n) => this.updateNode(n));
            members.forEach((n) => seenNodes.add(n.name));
            syncChildren(r.grid, els);
            rackEls.push(r.el);
        }
        for (const name of this.racks.keys()) {
            if (!byRack.has(name))
                this.racks.delete(name);
        }
        for (const name of this.nodes.keys()) {
            if (!seenNodes.has(name))
                this.nodes.delete(name);
        }
        syncChildren(this.racksEl, rackEls);
    }

    updateNode(n) {
        const v = this.node(n.name);
        setAttr(v.el, 'data-state', n.state);
        setAttr(v.el, 'data-held', Boolean(n.held));
        setAttr(v.el, 'title', nodeTitle(n));
        setAttr(v.el, 'aria-pressed', this.selected === n.name);
        const expected = Math.min(Math.max(n.gpus_expected | 0, 0), 72);
        const seen = Math.min(Math.max(n.gpus_seen | 0, 0), expected);
        // A node that never reported has not lost its GPUs: they are unknown, not missing.
        const reported = isTime(n.last_seen);
        const sig = `${expected}/${seen}/${reported}`;
        if (v.gpuSig !== sig) {
            const cells = [];
            for (let g = 0; g < expected; g++)
                cells.push(h('i', {class: 'gpu', 'data-seen': reported ? g < seen : 'unknown'}));
            replace(v.gpus, cells);
            v.gpuSig = sig;
        }
        return v.el;
    }

    /** Marks name (or nothing) as the node whose panel is open. */
    select(name) {
        this.selected = name;
        for (const [n, v] of this.nodes)
            setAttr(v.el, 'aria-pressed', n === name);
    }
}
