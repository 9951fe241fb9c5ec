// The weft dashboard: polls the operator API every second and draws what
// it says; its charts (uPlot, vendored beside this file) draw the history
// the crawl keeps (GET /v1/history), so they have data from the first load.
// Nothing is fetched from anywhere but this server.
"use strict";

const polls = []; // {t: ms, pages} of the last polls, for the rate card
let token = sessionStorage.getItem("weft-token") || "";
let hostSort = { key: "q", asc: false };
let lastHosts = [];
let range = "fine";
let lastHistory = null;
let historyAt = 0;
const charts = {};
window.weft = { charts }; // for tests and the curious

class APIError extends Error {
  constructor(path, status) {
    super(path + ": " + status);
    this.status = status;
  }
}

async function api(path, method = "GET") {
  const headers = token ? { Authorization: "Bearer " + token } : {};
  const resp = await fetch(path, { method, headers, cache: "no-store" });
  if (resp.status === 401) {
    askToken(token ? "The API refused the token: sign in again." : "This needs the API token: sign in above.");
    throw new APIError(path, 401);
  }
  if (!resp.ok) throw new APIError(path, resp.status);
  return resp.status === 204 ? null : resp.json();
}

// The token form: the token is kept for the browser session
// (sessionStorage), sent as a bearer token, never put in a URL.
function askToken(msg) {
  notice(msg);
  if (token) {
    token = "";
    sessionStorage.removeItem("weft-token");
  }
  renderLogin();
  document.getElementById("login").classList.add("wanted");
  document.getElementById("token").focus();
}
function renderLogin() {
  document.getElementById("login").hidden = !!token;
  document.getElementById("signed-in").hidden = !token;
}
function notice(msg) {
  const n = document.getElementById("notice");
  n.textContent = msg || "";
  n.hidden = !msg;
}
document.getElementById("login").addEventListener("submit", ev => {
  ev.preventDefault();
  const input = document.getElementById("token");
  const t = input.value.trim();
  if (!t) return;
  token = t;
  sessionStorage.setItem("weft-token", t);
  input.value = "";
  document.getElementById("login").classList.remove("wanted");
  notice("");
  renderLogin();
  tick();
});
document.getElementById("logout").addEventListener("click", () => {
  token = "";
  sessionStorage.removeItem("weft-token");
  renderLogin();
});

const fmt = new Intl.NumberFormat("en");
function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + units[i];
}
function duration(s) {
  s = Math.floor(s);
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  return (d ? d + "d " : "") + (d || h ? h + "h " : "") + (d || h || m ? m + "m " : "") + (s % 60) + "s";
}
function ago(iso) {
  if (!iso || iso.startsWith("0001-")) return "–";
  return duration(Math.max(0, (Date.now() - Date.parse(iso)) / 1000)) + " ago";
}
function setStat(name, text, raw) {
  for (const el of document.querySelectorAll(`[data-stat="${name}"]`)) {
    el.textContent = text;
    el.dataset.value = raw;
  }
}
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
const sum = m => Object.values(m || {}).reduce((a, b) => a + b, 0);

function pollRate() {
  if (polls.length < 2) return 0;
  const last = polls[polls.length - 1];
  let first = polls[0];
  for (const p of polls) if (last.t - p.t <= 10000) { first = p; break; }
  const dt = (last.t - first.t) / 1000;
  return dt > 0 ? (last.pages - first.pages) / dt : 0;
}

// ---- charts ----

const axis = { stroke: "#8898a8", grid: { stroke: "#24303c", width: 1 }, ticks: { stroke: "#24303c" } };
const line = (label, stroke, extra) => Object.assign({ label, stroke, width: 2, spanGaps: false }, extra);
const chartDefs = {
  "chart-rate": {
    series: [line("pages/s", "#4ca3ff", { fill: "rgba(76,163,255,0.12)" })],
    values: s => [s.pages / s.seconds],
  },
  "chart-errors": {
    series: [line("no response", "#ff6b6b"), line("4xx", "#f5c04e"), line("5xx", "#ff9f43"), line("429", "#c08cff"), line("503", "#ff5fa2")],
    values: s => [sum(s.errors) / s.seconds, (s.status["4xx"] || 0) / s.seconds, (s.status["5xx"] || 0) / s.seconds, s.throttled / s.seconds, s.unavailable / s.seconds],
  },
  "chart-latency": {
    series: [line("p50 ms", "#5fd38d"), line("p95 ms", "#f5c04e")],
    values: s => [s.p50_seconds == null ? null : s.p50_seconds * 1000, s.p95_seconds == null ? null : s.p95_seconds * 1000],
  },
  "chart-queue": {
    series: [line("queue depth", "#4ca3ff", { scale: "q" }), line("hosts ready", "#5fd38d", { scale: "h" }), line("waiting", "#8898a8", { scale: "h" }),
      line("parked", "#ff9f43", { scale: "h" }), line("held", "#c08cff", { scale: "h" })],
    values: s => [s.queued, s.hosts_ready, s.hosts_waiting, s.hosts_parked, s.hosts_held],
    axes: [Object.assign({ scale: "q" }, axis), Object.assign({ scale: "h", side: 1, grid: { show: false } }, axis)],
  },
};

function chartData(id, samples) {
  const def = chartDefs[id];
  const cols = [[]].concat(def.series.map(() => []));
  for (const s of samples) {
    if (!(s.seconds > 0)) continue;
    cols[0].push(Date.parse(s.start) / 1000 + s.seconds);
    def.values(s).forEach((v, i) => cols[i + 1].push(v));
  }
  return cols;
}

function drawCharts() {
  const h = lastHistory;
  if (!h) return;
  const samples = range === "fine" ? h.fine.slice() : h.coarse.slice();
  if (range === "fine" && h.current && h.current.seconds >= h.interval_seconds / 2) samples.push(h.current);
  const note = document.getElementById("history-note");
  note.textContent = (range === "fine" ? h.interval_seconds : h.coarse_interval_seconds) + " s samples, kept by the crawl";
  for (const id of Object.keys(chartDefs)) {
    const box = document.getElementById(id);
    const data = chartData(id, samples);
    box.dataset.points = data[0].length;
    let u = charts[id];
    if (!u) {
      const def = chartDefs[id];
      u = charts[id] = new uPlot({
        width: Math.max(300, box.clientWidth - 8), height: 170, title: box.dataset.title,
        series: [{}].concat(def.series),
        axes: [axis].concat(def.axes || [axis]),
        scales: { x: { time: true } },
        legend: { live: true },
        cursor: { drag: { x: false, y: false } },
      }, data, box);
    } else {
      u.setData(data);
    }
  }
}
function resizeCharts() {
  for (const [id, u] of Object.entries(charts)) {
    const box = document.getElementById(id);
    u.setSize({ width: Math.max(300, box.clientWidth - 8), height: 170 });
  }
}
window.addEventListener("resize", resizeCharts);
for (const b of document.querySelectorAll("[data-range]")) {
  b.addEventListener("click", () => {
    range = b.dataset.range;
    for (const o of document.querySelectorAll("[data-range]")) o.classList.toggle("on", o === b);
    drawCharts();
  });
}

async function loadHistory() {
  lastHistory = await api("/v1/history");
  historyAt = Date.now();
  drawCharts();
}

// ---- overview ----

function renderStats(s) {
  const state = document.getElementById("state");
  state.textContent = s.paused ? "paused" : "running";
  state.className = "badge " + (s.paused ? "paused" : "running");
  setStat("elapsed", duration(s.elapsed_seconds), s.elapsed_seconds);
  setStat("pages", fmt.format(s.pages), s.pages);
  setStat("stored", s.frontier.stored == null ? "counting…" : fmt.format(s.frontier.stored), s.frontier.stored);
  setStat("queued", fmt.format(s.frontier.queued), s.frontier.queued);
  setStat("in_flight", fmt.format(s.frontier.in_flight), s.frontier.in_flight);
  for (const k of ["active_hosts", "ready_hosts", "waiting_hosts", "parked_hosts", "held_hosts"]) setStat(k, fmt.format(s.frontier[k]), s.frontier[k]);
  // With nothing in flight the crawl says what it waits for.
  const waiting = document.getElementById("waiting");
  const w = s.frontier.wait;
  waiting.hidden = s.paused || s.frontier.in_flight > 0 || !w || !w.text;
  waiting.textContent = waiting.hidden ? "" : "Waiting " + w.text;
  setStat("bytes", bytes(s.bytes), s.bytes);
  setStat("warc_bytes", bytes(s.warc_bytes), s.warc_bytes);
  polls.push({ t: Date.now(), pages: s.pages });
  while (polls.length > 60) polls.shift();
  const r = pollRate();
  setStat("rate", r.toFixed(1), r);

  const mix = document.getElementById("status-mix");
  mix.replaceChildren();
  const classes = Object.entries(s.by_status).sort();
  const errors = sum(s.errors);
  if (errors) classes.push(["errors", errors]);
  const most = Math.max(1, ...classes.map(([, n]) => n));
  for (const [name, n] of classes) {
    const row = el("div", undefined, "bar");
    row.append(el("span", name, "name s" + (name === "errors" ? "err" : name[0])));
    const fill = el("span", undefined, "fill");
    fill.style.width = (300 * n / most) + "px";
    const count = el("span", fmt.format(n));
    count.dataset.status = name;
    count.dataset.value = n;
    row.append(fill, count);
    mix.append(row);
  }

  const rej = document.getElementById("rejected");
  rej.replaceChildren();
  for (const [reason, n] of Object.entries(s.rejected).sort((a, b) => b[1] - a[1])) {
    const tr = el("tr");
    const td = el("td", fmt.format(n));
    td.dataset.rejected = reason;
    td.dataset.value = n;
    tr.append(el("td", reason), td);
    rej.append(tr);
  }

  const warc = document.getElementById("warc");
  warc.replaceChildren(...s.warc_files.map(f => el("li", f)));
}

function policyText(p) {
  if (!p) return "–";
  const parts = [];
  if (p.crawl_delay) parts.push("delay " + p.crawl_delay);
  if (p.disallowed && p.disallowed.length) parts.push("disallow " + p.disallowed.join(" "));
  if (p.max_urls) parts.push("max " + fmt.format(p.max_urls) + " URLs");
  if (p.boost) parts.push("boost ×" + p.boost);
  if (p.boosts && p.boosts.length) parts.push("boosts " + p.boosts.map(b => b.pattern + " ×" + b.factor).join(" "));
  return parts.join(", ") || "set";
}

// nextText says when a host may be asked next, for the states where that
// is what holds it.
function nextText(h, now) {
  if (["held", "given up", "robots-blocked", "parked"].includes(h.state)) return "– (" + h.state + ")";
  if (h.state === "in flight") return "after this fetch";
  if (!h.next_allowed) return "now";
  const wait = (Date.parse(h.next_allowed) - now) / 1000;
  return wait > 0 ? "in " + wait.toFixed(1) + " s" : "now";
}

function queuedText(h) {
  return fmt.format(h.queued_in_memory) + (h.more_on_disk ? " + more on disk" : "");
}

function renderHosts() {
  const filter = document.getElementById("host-filter").value.trim().toLowerCase();
  const now = Date.now();
  const rows = lastHosts.filter(h => !filter || h.host.includes(filter)).map(h => ({
    h, host: h.host, state: h.state, q: h.queued_in_memory + (h.more_on_disk ? 0.5 : 0),
    next_allowed: h.next_allowed ? Date.parse(h.next_allowed) : 0, why: h.next_allowed_why, gap_seconds: h.gap_seconds,
    error_streak: h.error_streak, robots: h.robots ? h.robots.outcome : "–", policy: policyText(h.policy),
  }));
  const k = hostSort.key;
  rows.sort((a, b) => {
    const c = a[k] < b[k] ? -1 : a[k] > b[k] ? 1 : 0;
    return hostSort.asc ? c : -c;
  });
  const body = document.getElementById("hosts");
  body.replaceChildren(...rows.map(r => {
    const tr = el("tr");
    tr.dataset.host = r.host;
    const link = el("a", r.host);
    link.href = "#/host/" + encodeURIComponent(r.host);
    const name = el("td");
    name.append(link);
    const st = el("td", r.state, "st " + r.state.replace(/ /g, "-"));
    st.dataset.state = r.state;
    tr.append(name, st, el("td", queuedText(r.h)), el("td", nextText(r.h, now)), el("td", r.why || "–"),
      el("td", r.gap_seconds.toFixed(2) + " s"), el("td", r.error_streak), el("td", r.robots), el("td", r.policy, r.h.policy ? "policy" : ""));
    return tr;
  }));
  for (const th of document.querySelectorAll("th[data-key]")) {
    th.classList.toggle("sorted", th.dataset.key === hostSort.key);
    th.classList.toggle("asc", th.dataset.key === hostSort.key && hostSort.asc);
  }
}

function fetchRow(f) {
  const tr = el("tr");
  const st = f.status ? String(f.status) : "–";
  tr.append(el("td", new Date(f.time).toLocaleTimeString()), el("td", st, "s" + (f.status ? st[0] : "err")),
    el("td", f.duration_ms ?? ""), el("td", f.outcome + (f.error ? ": " + f.error : "")), el("td", f.url, "url"));
  return tr;
}

function renderFetches(list) {
  document.getElementById("fetches").replaceChildren(...list.slice(0, 30).map(fetchRow));
}

// renderCluster draws GET /v1/cluster: one row per node, from the lease
// bucket and each node's own stats.
function renderCluster(v) {
  document.getElementById("cluster-panel").hidden = false;
  document.getElementById("cluster-summary").textContent =
    `${v.nodes.length} nodes, ${v.partitions} partitions` + (v.unowned.length ? `, ${v.unowned.length} not held` : "") +
    `, ${fmt.format(v.totals.pages)} pages in all` + (v.complete ? "" : " (some nodes did not answer)");
  document.getElementById("cluster").replaceChildren(...v.nodes.map(n => {
    const tr = el("tr");
    tr.dataset.node = n.node;
    tr.dataset.partitions = n.partitions.length;
    const s = n.stats;
    tr.append(el("td", n.node), el("td", String(n.partitions.length)), el("td", s && s.cluster ? fmt.format(s.cluster.handoffs) : "–"),
      el("td", s && s.cluster ? fmt.format(s.cluster.snapshots) : "–"),
      el("td", s ? fmt.format(s.pages) : "–"), el("td", s ? fmt.format(s.frontier.queued) : "–"),
      el("td", s ? fmt.format(s.frontier.in_flight) : "–"), el("td", s ? (s.paused ? "paused" : "running") : "unreachable: " + n.error));
    if (s) tr.dataset.pages = s.pages;
    return tr;
  }));
}

// clusterTick draws the cluster table apart from the rest of the page,
// at most one request at a time (it asks every node): a cluster that does
// not answer leaves the node's own numbers updating.
let clusterBusy = false;
async function clusterTick() {
  if (clusterBusy) return;
  clusterBusy = true;
  try {
    renderCluster(await api("/v1/cluster"));
  } catch (e) {
    document.getElementById("cluster-panel").hidden = false;
    document.getElementById("cluster-summary").textContent = "the cluster did not answer: " + e.message;
  } finally {
    clusterBusy = false;
  }
}

// renderSeeds draws GET /v1/seeds: the first 100 seeds, each with its
// state (running, done, limit, failing) and counts, and the totals.
function renderSeeds(v) {
  document.getElementById("seeds-panel").hidden = v.total === 0;
  const t = v.totals;
  document.getElementById("seeds-summary").textContent =
    `${fmt.format(v.total)} seeds: ${t.running} running, ${t.done} done, ${t.limit} at their limit, ${t.failing} failing` +
    (v.seeds.length < v.total ? ` (the first ${v.seeds.length} shown)` : "");
  document.getElementById("seeds").replaceChildren(...v.seeds.map(s => {
    const tr = el("tr");
    tr.dataset.seed = s.url;
    tr.dataset.state = s.state;
    tr.dataset.pages = s.pages;
    tr.append(el("td", s.url), el("td", s.state, "badge " + s.state), el("td", fmt.format(s.pages)),
      el("td", s.options.max_pages ? fmt.format(s.options.max_pages) : "–"), el("td", bytes(s.bytes)),
      el("td", fmt.format(s.errors)), el("td", fmt.format(s.dropped)));
    return tr;
  }));
}

// ---- one host ----

function viewedHost() {
  const m = location.hash.match(/^#\/host\/(.+)$/);
  return m ? decodeURIComponent(m[1]) : "";
}

function setHost(field, text, raw) {
  const e = document.querySelector(`[data-host="${field}"]`);
  e.textContent = text;
  e.dataset.value = raw === undefined ? text : raw;
}

function renderHost(h) {
  document.getElementById("host-name").textContent = h.host;
  const st = document.getElementById("host-state");
  st.textContent = h.state;
  st.dataset.value = h.state;
  st.className = "badge st " + h.state.replace(/ /g, "-");
  const now = Date.now();
  setHost("next_allowed", nextText(h, now) + (h.next_allowed ? " (" + new Date(h.next_allowed).toLocaleTimeString() + ")" : ""), h.next_allowed || "");
  setHost("next_allowed_why", h.next_allowed_why || "nothing holds it", h.next_allowed_why);
  setHost("gap_seconds", h.gap_seconds.toFixed(2) + " s", h.gap_seconds);
  setHost("crawl_delay_seconds", h.crawl_delay_seconds ? h.crawl_delay_seconds + " s" : "–", h.crawl_delay_seconds);
  setHost("backoff_seconds", h.backoff_seconds ? h.backoff_seconds.toFixed(1) + " s" : "–", h.backoff_seconds);
  setHost("error_streak", String(h.error_streak), h.error_streak);
  const r = h.robots;
  setHost("robots", r ? r.outcome + (r.status ? " (HTTP " + r.status + ")" : "") : "not fetched (or expired)", r ? r.outcome : "");
  setHost("robots_age", r ? duration(r.age_seconds) + " ago" : "–", r ? r.age_seconds : "");
  setHost("policy", policyText(h.policy), h.policy ? JSON.stringify(h.policy) : "");
  setHost("urls_accepted", fmt.format(h.urls_accepted), h.urls_accepted);
  setHost("queued", queuedText(h), h.queued_in_memory);
  const a = h.activity;
  setHost("fetched", a ? fmt.format(a.fetched) : "–", a ? a.fetched : "");
  setHost("errors", a ? fmt.format(a.errors) + " (" + h.errors + " on its clock)" : String(h.errors), a ? a.errors : h.errors);
  setHost("last_fetch", a ? ago(a.last_fetch) : "–", a ? a.last_fetch : "");
  setHost("per_minute", a && a.per_minute ? a.per_minute.toFixed(1) + " a minute" : "–", a ? a.per_minute : "");
  setHost("parks", String(h.parks), h.parks);
  document.getElementById("host-fetches").replaceChildren(...(a ? a.last : []).map(fetchRow));
  const parks = (a ? a.parks : []).map(p => {
    const tr = el("tr");
    tr.append(el("td", new Date(p.at).toLocaleString()), el("td", new Date(p.until).toLocaleString()),
      el("td", duration((Date.parse(p.until) - Date.parse(p.at)) / 1000)));
    return tr;
  });
  if (!parks.length) {
    const tr = el("tr");
    const td = el("td", a ? "not parked this run" : "not fetched lately: nothing kept", "muted");
    td.colSpan = 3;
    tr.append(td);
    parks.push(tr);
  }
  document.getElementById("host-parks").replaceChildren(...parks);
  document.getElementById("host-view").dataset.loaded = h.host;
}

// renderHostURLs lists the host's URLs GET /v1/urls gives (the first
// hundred in the store's order, not the queue's), those queued first, each
// group by its estimate now, highest first: what the host is asked for
// next, and why (docs/design.md, "What is fetched first").
function renderHostURLs(list) {
  const first = u => (u.status === "queued" ? 0 : 1);
  list.sort((a, b) => first(a) - first(b) || b.estimate.rank - a.estimate.rank);
  const rows = list.slice(0, 50).map(u => {
    const e = u.estimate, tr = el("tr");
    tr.dataset.url = u.url;
    const est = el("td", fmt.format(e.rank));
    est.dataset.value = e.rank;
    est.title = "×" + e.boost + " × (" + e.in_link_cash + " + " + e.depth_prior + " + " + e.sitemap_prior + ")";
    tr.append(el("td", u.status), el("td", fmt.format(u.rank)), est, el("td", fmt.format(e.in_link_cash)), el("td", String(e.depth_prior)),
      el("td", String(e.sitemap_prior)), el("td", "×" + e.boost), el("td", u.url, "url"));
    return tr;
  });
  if (!rows.length) {
    const tr = el("tr");
    const td = el("td", "no URL of this host is known", "muted");
    td.colSpan = 8;
    tr.append(td);
    rows.push(tr);
  }
  document.getElementById("host-urls").replaceChildren(...rows);
  document.getElementById("host-urls").dataset.count = String(list.length);
}

async function hostTick(name) {
  try {
    renderHost(await api("/v1/hosts/" + encodeURIComponent(name)));
  } catch (e) {
    document.getElementById("host-state").textContent = e.status === 404 ? "unknown to the crawl" : "unreachable";
  }
  try {
    renderHostURLs((await api("/v1/urls?limit=100&host=" + encodeURIComponent(name))).urls);
  } catch (e) {
    // A host name /v1/urls refuses, or a crawl that stopped: the rest of the page stands.
  }
}

function route() {
  const name = viewedHost();
  document.getElementById("overview").hidden = !!name;
  document.getElementById("host-view").hidden = !name;
  if (name) {
    document.getElementById("host-view").dataset.loaded = "";
    document.getElementById("host-name").textContent = name;
    hostTick(name);
  } else {
    resizeCharts();
  }
}
window.addEventListener("hashchange", route);

async function hold(on) {
  const name = viewedHost();
  try {
    await api("/v1/hosts/" + encodeURIComponent(name) + (on ? "/pause" : "/resume"), "POST");
    hostTick(name);
  } catch (e) {
    if (e.status !== 401) notice("could not " + (on ? "hold " : "release ") + name + ": " + e.message);
  }
}
document.getElementById("host-hold").addEventListener("click", () => hold(true));
document.getElementById("host-release").addEventListener("click", () => hold(false));

// ---- the loop ----

// Ticks run one at a time, in the order asked: a tick asked while one runs
// runs once that one is done. Run side by side (setInterval's way, once
// the API answers slower than a second), an older tick's answers could be
// drawn over a newer one's, and an update counted after a change (a pause)
// could still show the numbers from before it.
let ticking = null;
let tickAgain = false;
function tick() {
  if (ticking) {
    tickAgain = true;
    return ticking;
  }
  ticking = (async () => {
    do {
      tickAgain = false;
      await tickOnce();
    } while (tickAgain);
    ticking = null;
  })();
  return ticking;
}

async function tickOnce() {
  try {
    const name = viewedHost();
    if (name) hostTick(name);
    const [s, hosts, fetches, seeds] = await Promise.all([api("/v1/stats"), api("/v1/hosts?limit=500"), api("/v1/fetches"), api("/v1/seeds?limit=100")]);
    renderStats(s);
    renderSeeds(seeds);
    if (s.cluster) clusterTick();
    lastHosts = hosts.hosts;
    renderHosts();
    renderFetches(fetches.fetches);
    if (!lastHistory || Date.now() - historyAt >= Math.max(1, Math.min(lastHistory.interval_seconds, 5)) * 1000) await loadHistory();
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
    document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
  } catch (e) {
    if (e.status === 401) return;
    const state = document.getElementById("state");
    state.textContent = "unreachable";
    state.className = "badge down";
  }
}

async function control(path) {
  try {
    await api(path, "POST");
    notice("");
    await tick();
  } catch (e) {
    if (e.status !== 401) notice(path + " failed: " + e.message);
  }
}

for (const th of document.querySelectorAll("th[data-key]")) {
  th.addEventListener("click", () => {
    hostSort = { key: th.dataset.key, asc: hostSort.key === th.dataset.key ? !hostSort.asc : true };
    renderHosts();
  });
}
document.getElementById("host-filter").addEventListener("input", renderHosts);
document.getElementById("pause").addEventListener("click", () => control("/v1/pause"));
document.getElementById("resume").addEventListener("click", () => control("/v1/resume"));
renderLogin();
route();
tick();
setInterval(tick, 1000);
