// @ts-check
// DOM helpers of every page: elements built with textContent only (never HTML), the notice box.

/**
 * The element of a selector, checked to be of the expected class (a missing or different element
 * is a defect of the page's shell: it throws instead of failing later on null).
 * @template {Element} T
 * @param {string} selector
 * @param {{ new (...args: never[]): T }} type
 * @param {ParentNode} [root]
 * @returns {T}
 */
export function el(selector, type, root = document) {
  const found = root.querySelector(selector);
  if (!(found instanceof type)) throw new Error(`dashboard: ${selector} is not a ${type.name}`);
  return found;
}

/** @typedef {string | number | Node | null | undefined | false} Child */
/** @typedef {Record<string, string | number | boolean | null | undefined | ((e: Event) => unknown)>} Attrs */

/**
 * An element with attributes and children (strings become text nodes: never HTML). Attributes
 * named on… are event listeners.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs | null} [attrs]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (typeof v === 'function') {
      if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    } else if (k === 'class') node.className = String(v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat())
    if (c !== null && c !== undefined && c !== false) node.append(c instanceof Node ? c : String(c));
  return node;
}

/**
 * Shows the page's notice (role=alert).
 * @param {'ok' | 'error'} kind
 * @param {string | Node} content
 */
export function notice(kind, content) {
  const box = document.getElementById('aviso');
  if (!box) return;
  box.className = kind;
  box.replaceChildren(content);
  box.hidden = false;
  box.scrollIntoView({ block: 'nearest' });
}

export function clearNotice() {
  const box = document.getElementById('aviso');
  if (box) box.hidden = true;
}

/**
 * Replaces a table body's rows, or shows one row saying why it is empty.
 * @param {HTMLTableSectionElement} tbody
 * @param {HTMLTableRowElement[]} rows
 * @param {string} empty
 */
export function fill(tbody, rows, empty) {
  tbody.replaceChildren(
    ...(rows.length ? rows : [h('tr', {}, h('td', { colspan: 9, class: 'vacio' }, empty))]),
  );
}

/**
 * Shows or hides a button: `hidden` alone is not enough where a stylesheet sets `display`.
 * @param {HTMLElement} node
 * @param {boolean} visible
 */
export function show(node, visible) {
  node.hidden = !visible;
}
