// Events: the controller's decisions with their reasons (GET /v1/events, newest first), as
// the live list on the right and as a node's history in its panel. One <li> per event, kept
// by id and rebuilt only when the event changes (an action's "done" arrives later).

import {clock, h, syncChildren} from './dom.js';

/** One line saying what happened, from an event object of docs/api.md. */
function headline(ev) {
    const gpu = Number.isInteger(ev.gpu) ? ` GPU ${ev.gpu}` : '';
    switch (ev.kind) {
    case 'transition':
        return [h('span', {class: 'st', 'data-state': ev.from}, ev.from || '?'), ' → ',
                h('span', {class: 'st', 'data-state': ev.to}, ev.to || '?'),
                ev.actor ? ` by ${ev.actor}` : ''];
    case 'action': {
        const status = ev.done === null || ev.done === undefined ? 'pending'
                       : ev.done                               ? 'done'
                                                               : 'failed';
        return [`${ev.action || 'action'}${ev.job ? ` job ${ev.job}` : ''} `,
                h('span', {class: `act act-${status}`}, status),
                ev.result ? `: ${ev.result}` : ''];
    }
    case 'held':
        return ['held for an operator', gpu];
    default:
        return [`${ev.rule || 'finding'}${gpu}`,
                ev.severity && ev.severity !== 'info' ? ` (${ev.severity})` : ''];
    }
}

/**
 * The <li> for one event. onNode(name), when given, makes the node name a button that opens
 * the node's panel.
 */
export function eventItem(ev, onNode) {
    const node = ev.node
        ? onNode ? h('button', {type: 'button', class: 'link', 'data-node-link': ev.node,
                                onclick: () => onNode(ev.node)}, ev.node)
                 : h('span', {class: 'ev-node'}, ev.node)
        : null;
    const text = ev.kind === 'action' ? ev.reason : ev.detail;
    return h('li', {class: 'event', 'data-id': ev.id, 'data-kind': ev.kind,
                    'data-rule': ev.rule || '', 'data-severity': ev.severity || ''},
             h('div', {class: 'ev-head'},
               h('time', {class: 'ev-time', datetime: new Date(ev.time * 1000).toISOString()},
                 clock(ev.time)),
               h('span', {class: 'kind'}, ev.kind || '?'), node,
               ev.job && ev.kind !== 'action'
                   ? h('span', {class: 'ev-job'}, `job ${ev.job}`) : null,
               h('span', {class: 'ev-what'}, headline(ev))),
             text ? h('div', {class: 'ev-detail'}, text) : null,
             ev.evidence ? h('div', {class: 'ev-evidence'}, ev.evidence) : null);
}

/** A list of events kept in step with the API's answers. */
export class EventList {
    /** ol: the list element; onNode: as for eventItem. */
    constructor(ol, onNode) {
        this.ol = ol;
        this.onNode = onNode;
        this.items = new Map(); // id -> {sig, li}
        this.newest = null;
    }

    /** events: newest first. Returns the number of events not seen before. */
    update(events) {
        const keep = new Map();
        const order = [];
        let fresh = 0;
        for (const ev of events) {
            const sig = JSON.stringify(ev);
            let item = this.items.get(ev.id);
            if (!item || item.sig !== sig) {
                const li = eventItem(ev, this.onNode);
                if (!item && this.newest !== null && ev.id > this.newest) {
                    li.classList.add('fresh');
                    fresh++;
                }
                item = {sig, li};
            }
            keep.set(ev.id, item);
            order.push(item.li);
        }
        this.items = keep;
        this.newest = events.length ? Math.max(this.newest ?? 0, events[0].id) : this.newest;
        syncChildren(this.ol, order);
        return fresh;
    }
}
