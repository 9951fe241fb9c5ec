// weft's page script: evaluated in every document of a rendering tab
// before the page's own scripts (Page.addScriptToEvaluateOnNewDocument),
// with WEFT_CONFIG replaced by its settings. It keeps what the behaviours
// need out of the page's reach (a closure) and shows the renderer one
// frozen, non-enumerable object, window.__weft.
(() => {
  'use strict';
  const cfg = WEFT_CONFIG;
  if (Object.prototype.hasOwnProperty.call(window, '__weft')) return;
  const top = window === window.top;

  // Links seen in the DOM at any step: a view a click replaces (a
  // router's next route, another tab) takes its links with it.
  const found = new Set();
  // Navigations the page asked for and was kept from: pushState,
  // replaceState, location, window.open.
  const navs = [];
  const navSeen = new Set();
  const record = (u) => {
    if (navs.length >= cfg.maxNavs || u === undefined || u === null) return;
    try {
      const abs = new URL(String(u), document.baseURI);
      if (abs.protocol !== 'http:' && abs.protocol !== 'https:') return;
      abs.hash = '';
      if (!navSeen.has(abs.href)) {
        navSeen.add(abs.href);
        navs.push(abs.href);
      }
    } catch (e) {}
  };

  // Elements given a pointer listener: what a script made clickable
  // that is not a link or a button. Seen here because this runs first.
  const listened = new WeakSet();
  const pointerTypes = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup']);
  const addListener = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type) {
    if (pointerTypes.has(type) && this instanceof Element) listened.add(this);
    return Reflect.apply(addListener, this, arguments);
  };
  // el.onclick = fn too.
  for (const type of pointerTypes) {
    const d = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'on' + type);
    if (!d || !d.set || !d.configurable) continue;
    Object.defineProperty(HTMLElement.prototype, 'on' + type, {
      configurable: true,
      enumerable: d.enumerable,
      get: d.get,
      set(fn) {
        if (fn) listened.add(this);
        return d.set.call(this, fn);
      },
    });
  }

  if (top && cfg.capture) {
    // Same-document navigations (a router's routes) go on, recorded:
    // the view they render is read as the page's.
    for (const m of ['pushState', 'replaceState']) {
      const orig = History.prototype[m];
      History.prototype[m] = function (state, title, url) {
        record(url);
        return Reflect.apply(orig, this, arguments);
      };
    }
    // A window is never opened: its URL is recorded.
    window.open = function (url) {
      record(url);
      return null;
    };
    // Every other navigation of the page (location, location.href,
    // assign, replace, reload, a link a script clicks, a GET form) is
    // recorded and cancelled, so the render stays on the page. Location
    // cannot be wrapped (its members are unforgeable); the Navigation API
    // sees them all. The renderer's interception backstops a navigation
    // that cannot be cancelled here.
    if (window.navigation) {
      addListener.call(window.navigation, 'navigate', (e) => {
        if (e.destination.sameDocument) return;
        if (e.navigationType !== 'reload' && !e.formData) record(e.destination.url);
        if (e.cancelable) e.preventDefault();
      });
    }
  }

  // A dialog would hold the page's scripts until answered, and the
  // render with them: none is shown, and a confirmation is declined
  // (what asks first is not done).
  window.alert = function () {};
  window.confirm = function () { return false; };
  window.prompt = function () { return null; };
  window.print = function () {};

  const collect = () => {
    if (found.size >= cfg.maxLinks) return;
    for (const a of document.querySelectorAll('a[href], area[href]')) {
      if (!a.relList.contains('nofollow')) found.add(a.href);
    }
    for (const f of document.querySelectorAll('iframe[src], frame[src]')) found.add(f.src);
  };

  // Timers a page set to run soon (a link written after a timeout) are
  // waited for after its load, at most a bound.
  const soon = new Map(); // id -> when due
  const setT = window.setTimeout, clearT = window.clearTimeout;
  window.setTimeout = function (fn, ms) {
    const wait = Number(ms) || 0;
    let id;
    const args = Array.prototype.slice.call(arguments);
    if (typeof fn === 'function' && wait <= cfg.timerWait) {
      args[0] = function () {
        soon.delete(id);
        return Reflect.apply(fn, this, arguments);
      };
      id = Reflect.apply(setT, window, args);
      soon.set(id, Date.now() + wait);
      return id;
    }
    return Reflect.apply(setT, window, args);
  };
  window.clearTimeout = function (id) {
    soon.delete(id);
    return Reflect.apply(clearT, window, arguments);
  };
  const frames = (n) => new Promise((r) => {
    const step = () => (n-- <= 0 ? r() : requestAnimationFrame(step));
    requestAnimationFrame(step);
  });
  const pause = (ms) => new Promise((r) => setT.call(window, r, ms));
  const timers = async (bound) => {
    const end = Date.now() + bound;
    let waited = false;
    while (soon.size > 0 && Date.now() < end) {
      waited = true;
      await pause(Math.min(50, end - Date.now()));
    }
    if (waited) await frames(2);
    return waited;
  };

  // What scrolls: the page, or else (an app whose body does not scroll)
  // its largest scrolling element, a feed's list.
  const scroller = () => {
    const page = document.scrollingElement || document.documentElement;
    if (!page || page.scrollHeight > window.innerHeight + 1 || !document.body) return page;
    let best = null;
    let n = 0;
    for (const el of document.body.getElementsByTagName('*')) {
      if (++n > cfg.maxScan) break;
      if (el.scrollHeight <= el.clientHeight + 1 || el.clientHeight === 0) continue;
      const oy = getComputedStyle(el).overflowY;
      if ((oy === 'auto' || oy === 'scroll') && (!best || el.clientHeight * el.scrollHeight > best.clientHeight * best.scrollHeight)) best = el;
    }
    return best || page;
  };
  const height = () => {
    const el = scroller();
    return el ? el.scrollHeight : 0;
  };
  // scroll steps down a viewport at a time to the bottom the page has
  // now, as a reader would (a lazy element between two jumps would never
  // be seen), at most maxSteps steps, then waits a moment for the page
  // to grow. What grows meanwhile is the next scroll's.
  const scroll = async (maxSteps) => {
    const el = scroller();
    if (!el) return false;
    const page = el === document.scrollingElement || el === document.documentElement;
    const view = page ? window.innerHeight : el.clientHeight;
    const h0 = el.scrollHeight;
    let steps = 0;
    for (; steps < maxSteps && (page ? window.scrollY : el.scrollTop) + view < h0 - 1; steps++) {
      if (page) window.scrollBy(0, Math.max(view * 0.9, 100));
      else el.scrollTop += Math.max(view * 0.9, 50);
      await frames(1);
    }
    // At the bottom already, no scroll event is fired: nothing to wait
    // for here (what the last scroll asked for is settled by the caller).
    if (steps === 0) return false;
    await frames(2);
    for (let i = 0; i < 5 && el.scrollHeight <= h0; i++) await pause(50);
    collect();
    return el.scrollHeight > h0;
  };

  // What is clicked: controls that are not links to follow. A submit
  // button is not clicked (it would send a form), nor is a control whose
  // label says it ends a session, deletes or pays.
  const controls = 'button, input[type=button], summary, [role=button], [role=tab], [role=menuitem], [role=link], [onclick], [aria-expanded], [aria-controls], [data-href], [data-url], [data-link], [data-route], [data-to], [tabindex]:not([tabindex="-1"]), a:not([href]), a[href^="#"], a[href^="javascript:" i]';
  const more = /^\s*((load|show|see|view|read)\s+(more|all)|more|next|older|newer|expand|continue)\b/i;
  const harm = /\b(log\s*out|log\s*off|sign\s*out|delete|remove|unsubscribe|buy|checkout|pay|purchase|order|print|close account)\b/i;
  const clicked = new WeakSet();
  const label = (el) => ((el.innerText || el.value || el.getAttribute('aria-label') || el.title || '') + '').trim().slice(0, 200);
  const clickable = (el) => {
    if (clicked.has(el) || !el.isConnected) return false;
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') return false;
    // A form's submit button is clicked only for the page's own handler
    // (its submission is then stopped: see click).
    if (el.form && /^(submit|image|reset)$/i.test(el.type || '') && !(listened.has(el) || el.hasAttribute('onclick'))) return false;
    const link = el.closest('a[href]');
    if (link && !/^\s*(#|javascript:)/i.test(link.getAttribute('href'))) return false;
    if (harm.test(label(el))) return false;
    if (typeof el.checkVisibility === 'function' ? !el.checkVisibility() : el.getClientRects().length === 0) return false;
    return true;
  };
  const pointer = (el) => {
    if (!(el instanceof HTMLElement) || getComputedStyle(el).cursor !== 'pointer') return false;
    const up = el.parentElement;
    return !up || getComputedStyle(up).cursor !== 'pointer'; // the outermost of a pointer area
  };
  const next = () => {
    if (!document.body) return null;
    let first = null;
    let n = 0;
    for (const el of document.body.getElementsByTagName('*')) {
      if (++n > cfg.maxScan) break;
      if (!(el.matches(controls) || listened.has(el) || pointer(el)) || !clickable(el)) continue;
      if (more.test(label(el))) return el; // "more" first: a list's next part
      if (!first) first = el;
    }
    return first;
  };
  const click = async () => {
    collect();
    const el = next();
    if (!el) return '';
    clicked.add(el);
    const opts = { bubbles: true, cancelable: true, view: window, button: 0 };
    const noSubmit = (e) => e.preventDefault(); // runs first; the page's handlers still run
    addListener.call(window, 'submit', noSubmit, true);
    try {
      el.scrollIntoView({ block: 'center' });
      for (const t of ['pointerdown', 'mousedown', 'pointerup', 'mouseup']) {
        el.dispatchEvent(t.startsWith('pointer') ? new PointerEvent(t, opts) : new MouseEvent(t, opts));
      }
      el.click();
    } catch (e) {}
    window.removeEventListener('submit', noSubmit, true);
    await frames(2);
    await pause(50);
    collect();
    return label(el).slice(0, 60) || el.tagName.toLowerCase();
  };

  const api = Object.freeze({
    timers,
    scroll,
    height,
    click,
    read() {
      collect();
      const dt = document.doctype ? new XMLSerializer().serializeToString(document.doctype) + '\n' : '';
      const root = document.documentElement; // none while a navigation replaces the document
      return { url: location.href, links: Array.from(found), navs: navs.slice(), dom: root ? dt + root.outerHTML : '' };
    },
  });
  Object.defineProperty(window, '__weft', { value: api, enumerable: false, configurable: false, writable: false });
})();
