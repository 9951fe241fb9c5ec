// The weft dashboard: polls the operator API every second and draws what
// it says. No library, no network beyond this server.
"use strict";

const history = []; // {t: ms, pages} of the last polls, for the rate
const maxHistory = 600;
let token = sessionStorage.getItem("weft-token") || "";
let hostSort = { key: "queued_in_memory", asc: false };
let lastHosts = [];

async function api(path, method = "GET") {
  const headers = token ? { Authorization: "Bearer " + token } : {};
  let resp = await fetch(path, { method, headers, cache: "no-store" });
  if (resp.status === 401) {
    const t = prompt("weft API token");
    if (t) {
      token = t;
      sessionStorage.setItem("weft-token", t);
      resp = await fetch(path, { method, headers: { Authorization: "Bearer " + token }, cache: "no-store" });
    }
  }
  if (!resp.ok) throw new Error(path + ": " + resp.status);
  return resp.status === 204 ? null : resp.json();
}

const fmt = new Intl.NumberFormat("en");
function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + units[i];
}
function duration(s) {
  s = Math.floor(s);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return (h ? h + "h " : "") + (h || m ? m + "m " : "") + (s % 60) + "s";
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

function rate() {
  if (history.length < 2) return 0;
  const last = history[history.length - 1];
  let first = history[0];
  for (const h of history) if (last.t - h.t <= 10000) { first = h; break; }
  const dt = (last.t - first.t) / 1000;
  return dt > 0 ? (last.pages - first.pages) / dt : 0;
}

function drawRate() {
  const c = document.getElementById("rate");
  const w = c.width = c.clientWidth || 900, h = c.height;
  const g = c.getContext("2d");
  g.clearRect(0, 0, w, h);
  const pts = [];
  for (let i = 1; i < history.length; i++) {
    const dt = (history[i].t - history[i - 1].t) / 1000;
    pts.push(dt > 0 ? (history[i].pages - history[i - 1].pages) / dt : 0);
  }
  const top = Math.max(1, ...pts) * 1.1;
  g.strokeStyle = "#24303c";
  g.fillStyle = "#8898a8";
  g.font = "11px system-ui";
  for (let i = 0; i <= 4; i++) {
    const y = h - 14 - (h - 24) * i / 4;
    g.beginPath(); g.moveTo(36, y); g.lineTo(w, y); g.stroke();
    g.fillText((top * i / 4).toFixed(top < 10 ? 1 : 0), 2, y + 4);
  }
  g.strokeStyle = "#4ca3ff";
  g.lineWidth = 2;
  g.beginPath();
  pts.forEach((v, i) => {
    const x = 36 + (w - 40) * i / Math.max(1, maxHistory - 1);
    const y = h - 14 - (h - 24) * v / top;
    i ? g.lineTo(x, y) : g.moveTo(x, y);
  });
  g.stroke();
  g.fillText("pages/s, one point a second", 40, h - 2);
}

function renderStats(s) {
  const state = document.getElementById("state");
  state.textContent = s.paused ? "paused" : "running";
  state.className = "badge " + (s.paused ? "paused" : "running");
  setStat("elapsed", duration(s.elapsed_seconds), s.elapsed_seconds);
  setStat("pages", fmt.format(s.pages), s.pages);
  setStat("queued", fmt.format(s.frontier.queued), s.frontier.queued);
  setStat("in_flight", fmt.format(s.frontier.in_flight), s.frontier.in_flight);
  setStat("active_hosts", fmt.format(s.frontier.active_hosts), s.frontier.active_hosts);
  setStat("parked_hosts", fmt.format(s.frontier.parked_hosts), s.frontier.parked_hosts);
  setStat("held_hosts", fmt.format(s.frontier.held_hosts), s.frontier.held_hosts);
  setStat("bytes", bytes(s.bytes), s.bytes);
  setStat("warc_bytes", bytes(s.warc_bytes), s.warc_bytes);
  history.push({ t: Date.now(), pages: s.pages });
  while (history.length > maxHistory) history.shift();
  const r = rate();
  setStat("rate", r.toFixed(1), r);
  drawRate();

  const mix = document.getElementById("status-mix");
  mix.replaceChildren();
  const classes = Object.entries(s.by_status).sort();
  const errors = Object.values(s.errors).reduce((a, b) => a + b, 0);
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

function hostState(h) {
  return [h.held && "held", h.busy && "busy", h.parked && "parked", h.draining && "draining", h.gave_up && "given up"].filter(Boolean).join(", ") || "idle";
}

function renderHosts() {
  const filter = document.getElementById("host-filter").value.trim().toLowerCase();
  const rows = lastHosts.filter(h => !filter || h.host.includes(filter)).map(h => ({
    host: h.host, queued_in_memory: h.queued_in_memory + (h.more_on_disk ? "+" : ""), q: h.queued_in_memory,
    next_allowed: h.next_allowed ? new Date(h.next_allowed) : null, gap_seconds: h.gap_seconds, error_streak: h.error_streak,
    robots: h.robots ? h.robots.outcome : "–", state: hostState(h),
  }));
  const k = hostSort.key;
  rows.sort((a, b) => {
    const va = k === "queued_in_memory" ? a.q : a[k], vb = k === "queued_in_memory" ? b.q : b[k];
    const c = va < vb ? -1 : va > vb ? 1 : 0;
    return hostSort.asc ? c : -c;
  });
  const now = Date.now();
  const body = document.getElementById("hosts");
  body.replaceChildren(...rows.map(r => {
    const tr = el("tr");
    const wait = r.next_allowed ? Math.max(0, (r.next_allowed - now) / 1000) : 0;
    tr.append(el("td", r.host), el("td", r.queued_in_memory), el("td", wait ? "in " + wait.toFixed(1) + " s" : "now"),
      el("td", r.gap_seconds.toFixed(2) + " s"), el("td", r.error_streak), el("td", r.robots), el("td", r.state));
    return tr;
  }));
  for (const th of document.querySelectorAll("th[data-key]")) {
    th.classList.toggle("sorted", th.dataset.key === hostSort.key);
    th.classList.toggle("asc", th.dataset.key === hostSort.key && hostSort.asc);
  }
}

function renderFetches(list) {
  const body = document.getElementById("fetches");
  body.replaceChildren(...list.slice(0, 30).map(f => {
    const tr = el("tr");
    const st = f.status ? String(f.status) : "–";
    tr.append(el("td", new Date(f.time).toLocaleTimeString()), el("td", st, "s" + (f.status ? st[0] : "err")),
      el("td", f.duration_ms ?? ""), el("td", f.outcome), el("td", f.url, "url"));
    return tr;
  }));
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

async function tick() {
  try {
    const [s, hosts, fetches] = await Promise.all([api("/v1/stats"), api("/v1/hosts?limit=500"), api("/v1/fetches")]);
    renderStats(s);
    if (s.cluster) clusterTick();
    lastHosts = hosts.hosts;
    renderHosts();
    renderFetches(fetches.fetches);
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
    document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
  } catch (e) {
    const state = document.getElementById("state");
    state.textContent = "unreachable";
    state.className = "badge down";
  }
}

for (const th of document.querySelectorAll("th[data-key]")) {
  th.addEventListener("click", () => {
    hostSort = { key: th.dataset.key, asc: hostSort.key === th.dataset.key ? !hostSort.asc : true };
    renderHosts();
  });
}
document.getElementById("host-filter").addEventListener("input", renderHosts);
document.getElementById("pause").addEventListener("click", () => api("/v1/pause", "POST").then(tick));
document.getElementById("resume").addEventListener("click", () => api("/v1/resume", "POST").then(tick));
tick();
setInterval(tick, 1000);
