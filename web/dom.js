// DOM and formatting helpers shared by the dashboard's views.
//
// Everything shown here comes from the controller's API, and node names, reasons and evidence
// come from outside (agents, Slurm, operators). None of it is ever parsed as HTML: text goes
// in through Text nodes (append / textContent) and attributes through setAttribute, so a node
// called "<img onerror=...>" is displayed, not run.

/**
 * Creates an element. attrs: "class" sets className, a function value under an "on..." key
 * becomes an event listener, null/undefined are skipped. data-* and aria-* attributes take
 * booleans as "true"/"false"; on other attributes (open, hidden) true sets the attribute
 * empty and false leaves it out. Anything else is set as a string. children: nodes, or
 * values shown as text.
 */
export function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
        const valued = key.startsWith('data-') || key.startsWith('aria-');
        if (value === null || value === undefined || (value === false && !valued))
            continue;
        if (key === 'class')
            el.className = value;
        else if (key.startsWith('on') && typeof value === 'function')
            el.addEventListener(key.slice(2), value);
        else
            el.setAttribute(key, value === true && !valued ? '' : String(value));
    }
    append(el, children);
    return el;
}

/** Appends children (nodes, or values shown as text; null and undefined skipped). */
function append(el, children) {
    for (const c of children.flat(Infinity)) {
        if (c === null || c === undefined || c === false)
            continue;
        el.append(c instanceof Node ? c : String(c));
    }
    return el;
}

/** Replaces el's children. */
export function replace(el, ...children) {
    el.replaceChildren();
    return append(el, children);
}

/** Sets an attribute only when it changes (no needless style recalculation). */
export function setAttr(el, name, value) {
    const v = String(value);
    if (el.getAttribute(name) !== v)
        el.setAttribute(name, v);
}

/** Sets textContent only when it changes. */
export function setText(el, text) {
    const t = String(text);
    if (el.textContent !== t)
        el.textContent = t;
}

/** Sorts names the way people count: n2 before n10. */
export const byName = new Intl.Collator('en', {numeric: true}).compare;

const dash = '–';

export function isNum(v) {
    return typeof v === 'number' && Number.isFinite(v);
}

/** 0.404 -> "40.4%"; unknown -> "–". */
export function pct(v, digits = 1) {
    return isNum(v) ? `${(v * 100).toFixed(digits)}%` : dash;
}

export function num(v, digits = 2) {
    return isNum(v) ? v.toFixed(digits) : dash;
}

/** A count or rate with a k/M/G suffix. */
export function si(v, digits = 1) {
    if (!isNum(v))
        return dash;
    const units = [[1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    for (const [scale, unit] of units) {
        if (Math.abs(v) >= scale)
            return `${(v / scale).toFixed(digits)}${unit}`;
    }
    return v.toFixed(0);
}

function pad(n) {
    return String(n).padStart(2, '0');
}

/** A time the API knows: Unix seconds, where 0 means never. */
export function isTime(t) {
    return isNum(t) && t > 0;
}

/** Unix seconds -> local "HH:MM:SS", with the date when it is not today. */
export function clock(t) {
    if (!isTime(t))
        return dash;
    const d = new Date(t * 1000);
    const hms = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    const today = new Date();
    if (d.toDateString() === today.toDateString())
        return hms;
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${hms}`;
}

/** A duration in seconds, short: "42 s", "3 min", "5.2 h", "4 d". */
export function duration(s) {
    if (!isNum(s))
        return dash;
    s = Math.max(0, s);
    if (s < 90)
        return `${s.toFixed(0)} s`;
    if (s < 5400)
        return `${(s / 60).toFixed(0)} min`;
    if (s < 172800)
        return `${(s / 3600).toFixed(1)} h`;
    return `${(s / 86400).toFixed(0)} d`;
}

/** How long ago Unix time t was. */
export function ago(t) {
    return isTime(t) ? `${duration(Date.now() / 1000 - t)} ago` : dash;
}

/** Makes els the children of parent, in order, touching the DOM only when they differ. */
export function syncChildren(parent, els) {
    const c = parent.children;
    let same = c.length === els.length;
    for (let i = 0; same && i < els.length; i++)
        same = c[i] === els[i];
    if (!same)
        parent.replaceChildren(...els);
}
