// gslbd status page: polls the control API (GET /v1/status, /v1/events, /v1/history) and redraws the
// server-rendered tables in place. Read-only until a token is entered; the token lives in sessionStorage
// (this tab only) and goes out as "Authorization: Bearer" on drain and enable. No libraries, no CDN.
"use strict";
(function () {
  const POLL_MS = 2000;
  const TOKEN_KEY = "gslbd-token";
  const COLORS = ["#1f6feb", "#1a9b4b", "#d98a00", "#8250df", "#d43c3c", "#0aa3a3", "#bf3989", "#6e7781",
                  "#4d8b00", "#b35900", "#3b5bdb", "#9c6500"];
  const $ = (sel) => document.querySelector(sel);
  const state = { status: null, events: [], lastSeq: 0, history: null, colors: {}, failures: 0 };

  function esc(v) {
    return String(v).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }
  // [cluster] etcd: live, or cut off (serving the last shared state and its own checks); none without etcd.
  function etcdTile(st, tile) {
    const e = st.cluster && st.cluster.etcd;
    if (!e || typeof e !== "object") return "";
    return tile(e.state === "live" ? "good" : "bad", esc(e.state), "etcd (shared state)", "tile-etcd");
  }
  function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }
  function fmtNum(v, digits) {
    if (v === null || v === undefined) return '<span class="muted">–</span>';
    if (digits !== undefined) return v.toFixed(digits);
    return Math.abs(v) >= 10000 ? v.toLocaleString("en-US") : String(Math.round(v * 100) / 100);
  }
  function fmtAge(s) {
    if (s === null || s === undefined) return "never";
    if (s < 1) return "now";
    if (s < 120) return Math.round(s) + " s";
    if (s < 7200) return Math.round(s / 60) + " min";
    return Math.round(s / 3600) + " h";
  }
  function ms(v) { return v === null || v === undefined ? '<span class="muted">–</span>' : v.toFixed(v < 10 ? 2 : 1) + " ms"; }
  function pill(cls, text) { return `<span class="pill ${cls}">${esc(text)}</span>`; }
  function since(unixMs) {
    if (!unixMs) return "";
    return fmtAge((Date.now() - unixMs) / 1000) + " ago";
  }
  function colorOf(key) {
    if (!(key in state.colors)) state.colors[key] = COLORS[Object.keys(state.colors).length % COLORS.length];
    return state.colors[key];
  }

  async function api(method, path) {
    const headers = {};
    if (method !== "GET" && token()) headers["Authorization"] = "Bearer " + token();
    const r = await fetch(path, { method, headers, cache: "no-store" });
    let body = null;
    try { body = await r.json(); } catch (e) { body = null; }
    return { status: r.status, body };
  }

  function toast(text, err) {
    const t = $("#toast");
    t.textContent = text;
    t.className = "toast" + (err ? " err" : "");
    t.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { t.hidden = true; }, 4000);
  }

  // ------------------------------------------------------------------------------------------ rendering

  // Seconds after which a metric counts as unknown for a site or service: the largest max_age of the
  // hostnames that use it (a report older than that is stale for every one of them). 0 means never.
  function maxAges(st) {
    const site = {}, svc = {};
    for (const h of st.hostnames || []) {
      const m = h.max_age_s === undefined ? 60 : h.max_age_s;
      for (const s of h.services || []) {
        const k = s.site + "/" + s.address;
        site[s.site] = Math.max(site[s.site] || 0, m);
        svc[k] = Math.max(svc[k] || 0, m);
      }
    }
    return { site, svc };
  }
  function aged(age, max) {
    const txt = fmtAge(age);
    if (age !== null && age !== undefined && max > 0 && age > max) return `<span class="stale" title="older than max_age ${max} s: counts as unknown">${txt} <b>stale</b></span>`;
    return age === null || age === undefined ? '<span class="muted">never</span>' : txt;
  }

  function siteAnswers(st) {
    const a = {};
    for (const s of st.services) a[s.site] = (a[s.site] || 0) + (s.answers || 0);
    return a;
  }

  function renderTiles(st) {
    const svcs = st.services;
    const up = svcs.filter((s) => s.health === "up").length;
    const down = svcs.filter((s) => s.health === "down").length;
    const sitesUp = st.sites.filter((s) => s.up && s.enabled).length;
    const drained = st.sites.filter((s) => !s.enabled).length + svcs.filter((s) => !s.enabled).length;
    const qps = historyRate();
    const recent = state.events.filter((e) => Date.now() - e.unix_ms < 3600e3 && e.level !== "info" && e.level !== "debug").length;
    const tile = (cls, v, l, id) => `<div class="tile ${cls}" id="${id}"><div class="v">${v}</div><div class="l">${l}</div></div>`;
    $("#tiles").innerHTML =
      tile(sitesUp === st.sites.length ? "good" : "bad", `${sitesUp}/${st.sites.length}`, "sites in service", "tile-sites") +
      tile(down ? "bad" : "good", `${up}/${svcs.length}`, "services up", "tile-services") +
      tile(down ? "bad" : "good", down, "services down", "tile-down") +
      tile(drained ? "warn" : "good", drained, "drained", "tile-drained") +
      tile("", qps === null ? "–" : fmtNum(qps, qps < 10 ? 1 : 0), "GSLB answers / s", "tile-qps") +
      tile(recent ? "warn" : "good", recent, "warnings, last hour", "tile-events") +
      etcdTile(st, tile);
  }

  function adminButtons(kind, site, address, enabled) {
    if (!token()) return "";
    const a = address ? ` data-address="${esc(address)}"` : "";
    return enabled
      ? `<button class="drain" data-op="drain" data-site="${esc(site)}"${a}>Drain</button>`
      : `<button class="enable" data-op="enable" data-site="${esc(site)}"${a}>Enable</button>`;
  }

  function renderSites(st) {
    const ages = maxAges(st);
    const ans = siteAnswers(st);
    const total = Object.values(ans).reduce((x, y) => x + y, 0);
    const rows = st.sites.map((s) => {
      const a = s.ages_s || {};
      const ageCpu = a.cpu !== undefined ? a.cpu : s.report_age_s;
      const ageSess = a.sessions !== undefined ? a.sessions : s.report_age_s;
      const worst = [ageCpu, ageSess, a.load_factor].filter((x) => x !== null && x !== undefined);
      const age = worst.length ? Math.max(...worst) : s.report_age_s;
      let sess = '<span class="muted">–</span>';
      if (s.sessions_max) {
        const pct = Math.min(100, (100 * s.sessions_used) / s.sessions_max);
        sess = `<span class="bar"><i class="${pct > 90 ? "hot" : ""}" style="width:${pct.toFixed(1)}%"></i></span>${fmtNum(s.sessions_used)} / ${fmtNum(s.sessions_max)}`;
      }
      const health = s.up ? pill("up", "up") : pill("down", "down");
      const admin = s.enabled ? pill("enabled", "enabled") : pill("drained", "drained");
      const share = total ? ((100 * (ans[s.name] || 0)) / total).toFixed(1) + " %" : "";
      return `<tr data-site="${esc(s.name)}" class="${s.enabled ? "" : "out"}">
        <td class="site-name">${esc(s.name)}</td><td class="health">${health}</td><td class="admin">${admin}</td>
        <td class="num">${s.preference}</td><td class="num">${s.cpu === null ? '<span class="muted">–</span>' : fmtNum(s.cpu, 0) + " %"}</td>
        <td>${sess}</td><td class="num">${fmtNum(s.load_factor)}</td>
        <td class="num age">${aged(age, ages.site[s.name] || 0)}</td>
        <td class="num">${fmtNum(ans[s.name] || 0)}<span class="share">${share}</span></td>
        <td class="act">${adminButtons("site", s.name, "", s.enabled)}</td></tr>`;
    });
    $("#sites tbody").innerHTML = rows.join("");
  }

  function renderServices(st) {
    const ages = maxAges(st);
    const host = $("#svc-host").value;
    const rows = st.services.filter((s) => !host || (s.hostnames || []).includes(host)).map((s) => {
      const key = s.site + "/" + s.address;
      const c = s.check;
      let why = "";
      if (c && c.last_change_reason) why = `${c.last_change_reason}${c.last_change_unix_ms ? ", " + since(c.last_change_unix_ms) : ""}`;
      else if (c && c.last_error && s.health === "down") why = c.last_error;
      else if (!c) why = "not checked";
      const health = pill(s.health, s.health) + (why ? `<span class="why">${esc(why)}</span>` : "");
      const siteOut = st.sites.some((x) => x.name === s.site && !x.enabled);
      const admin = (s.enabled ? pill("enabled", "enabled") : pill("drained", "drained")) +
        (siteOut ? '<span class="why">site drained</span>' : "");
      const check = c ? `<span class="mono">${esc(c.type)} ${esc(c.target)}</span><span class="why">${c.flaps} flap${c.flaps === 1 ? "" : "s"}, last ${ms(c.last_latency_ms)}</span>` : '<span class="muted">none</span>';
      const fb = s.flashback || {};
      const conns = s.connections === null ? '<span class="muted">–</span>' : `${fmtNum(s.connections)} <span class="muted">(${aged(s.connections_age_s, ages.svc[key] || 0)})</span>`;
      return `<tr data-service="${esc(key)}" class="${s.enabled ? "" : "out"}">
        <td class="addr">${esc(s.address)}</td><td>${esc(s.site)}</td>
        <td class="hosts">${(s.hostnames || []).map(esc).join("<br>")}</td>
        <td class="health">${health}</td><td class="admin">${admin}</td><td>${check}</td>
        <td class="num">${ms(fb.l4_ms)}</td><td class="num">${ms(fb.l7_ms)}</td><td class="num">${conns}</td>
        <td class="num">${fmtNum(s.answers || 0)}</td>
        <td class="act">${adminButtons("service", s.site, s.address, s.enabled)}</td></tr>`;
    });
    $("#services tbody").innerHTML = rows.join("") || '<tr><td colspan="11" class="muted">no services</td></tr>';
  }

  function renderSources(st) {
    const src = st.sources;
    const card = $("#sources-card");
    if (!Array.isArray(src) || !src.length) { card.hidden = true; return; }
    card.hidden = false;
    // Whatever the sources report, shown as columns: the table follows the status JSON as it grows.
    // The status JSON's keys come sorted by name: the ones an operator reads first go first.
    const cols = ["name", "state", "type", "url", "last_success_age_s", "last_error"].filter((c) => src.some((s) => c in s));
    for (const s of src) for (const k of Object.keys(s)) if (!cols.includes(k) && (s[k] === null || typeof s[k] !== "object")) cols.push(k);
    $("#sources thead").innerHTML = "<tr>" + cols.map((c) => `<th>${esc(c.replace(/_/g, " "))}</th>`).join("") + "</tr>";
    $("#sources tbody").innerHTML = src.map((s) => `<tr data-source="${esc(s.name || "")}">` + cols.map((c) => {
      const v = s[c];
      if (c === "state" || c === "up") {
        const ok = v === true || v === "up" || v === "ok";
        return `<td>${pill(ok ? "up" : v === null || v === "unknown" ? "unknown" : "down", v === true ? "up" : v === false ? "down" : String(v))}</td>`;
      }
      if (/age_s$/.test(c)) return `<td class="num">${fmtAge(v)}</td>`;
      return `<td>${v === null || v === undefined ? '<span class="muted">–</span>' : esc(v)}</td>`;
    }).join("") + "</tr>").join("");
  }

  // [cluster] health_quorum: the setting, the members voting through etcd, and the services whose effective
  // verdict is not what this member's own checks say (api_page.cpp renders the same without JavaScript).
  function quorumText(q) {
    const t = `quorum ${q.quorum} of ${q.members} members; ${q.voting_members} with live verdicts in etcd (lease TTL ${q.verdict_ttl_s} s); `;
    if (q.own_view) return t + `${q.own_view_services} service(s) decided on this member's own checks alone (too few fresh verdicts) since ${q.own_view_since}`;
    return t + "every checked service is decided by the quorum";
  }
  function renderQuorum(st) {
    const q = st.health_quorum;
    const card = $("#quorum-card");
    if (!q) { card.hidden = true; return; }
    card.hidden = false;
    $("#quorum-summary").textContent = quorumText(q);
    const none = (n, text) => `<tr><td colspan="${n}" class="muted">${text}</td></tr>`;
    $("#quorum-differs tbody").innerHTML = st.services.filter((s) => s.check && s.check.quorum && s.check.own_state !== s.check.state).map((s) => {
      const key = s.site + "/" + s.address, v = s.check.quorum;
      const votes = `${v.down_votes} of ${v.voters} votes down, quorum ${q.quorum}` + (v.own_view ? "; too few votes: own view" : "");
      return `<tr data-differs="${esc(key)}"><td class="mono">${esc(key)}</td><td>${pill(s.check.own_state, s.check.own_state)}</td>
        <td>${pill(s.check.state, s.check.state)}</td><td>${esc(votes)}</td></tr>`;
    }).join("") || none(4, "none: every service is as this member's checks see it");
  }

  function renderEvents() {
    const kind = $("#ev-kind").value;
    const kinds = new Set(state.events.map((e) => e.kind));
    const sel = $("#ev-kind");
    for (const k of kinds) if (![...sel.options].some((o) => o.value === k)) sel.add(new Option(k, k));
    const list = state.events.filter((e) => !kind || e.kind === kind).slice(-200).reverse();
    $("#events tbody").innerHTML = list.map((e) =>
      `<tr data-seq="${e.seq}" data-kind="${esc(e.kind)}"><td title="${esc(e.time)}">${esc(e.time.replace("T", " ").replace("Z", ""))}</td>
       <td><span class="lvl ${esc(e.level)}">${esc(e.level)}</span></td><td><span class="kind">${esc(e.kind)}</span></td>
       <td class="mono">${esc(e.subject)}</td><td>${esc(e.message)}</td></tr>`).join("") ||
      '<tr><td colspan="5" class="muted">no events yet</td></tr>';
  }

  function fillHostSelect(sel, st) {
    const have = [...sel.options].map((o) => o.value);
    for (const h of st.hostnames || []) if (!have.includes(h.name)) sel.add(new Option(h.name, h.name));
  }

  // ------------------------------------------------------------------------------------------ the chart

  // Answers per sample interval, summed per site or per service, for one hostname or all.
  function chartSeries() {
    const h = state.history;
    if (!h || !h.samples || h.samples.length < 2) return null;
    const host = $("#chart-host").value, by = $("#chart-by").value;
    const groups = {};
    // /v1/history has no series for a service without answers in the window: the configured ones (from
    // /v1/status) start at 0, so the legend still names every site or service of the selection.
    for (const s of (state.status && state.status.services) || []) {
      if (host && !(s.hostnames || []).includes(host)) continue;
      const key = by === "site" ? s.site : s.site + " " + s.address;
      groups[key] = groups[key] || new Array(h.samples.length).fill(0);
    }
    for (const s of h.series) {
      if (host && s.hostname !== host) continue;
      const key = by === "site" ? s.site : s.site + " " + s.address;
      const g = groups[key] || (groups[key] = new Array(h.samples.length).fill(0));
      s.answers.forEach((v, i) => { g[i] += v; });
    }
    return { t: h.samples, groups };
  }

  function historyRate() {
    const h = state.history;
    if (!h || !h.samples || h.samples.length < 2) return null;
    const n = h.samples.length;
    let sum = 0;
    for (const s of h.series) sum += s.answers[n - 1];
    const dt = (h.samples[n - 1] - h.samples[n - 2]) / 1000;
    return dt > 0 ? sum / dt : null;
  }

  function renderChart() {
    const el = $("#chart"), legend = $("#chart-legend");
    const cs = chartSeries();
    if (!cs) { el.innerHTML = '<p class="muted">Collecting samples…</p>'; legend.innerHTML = ""; return; }
    const keys = Object.keys(cs.groups).sort();
    const n = cs.t.length;
    // Drawn at the element's own size (no stretching of the labels).
    const W = Math.max(300, el.clientWidth - 28 || 800), H = 210, L = 34, R = 8, T = 8, B = 20;
    const totals = cs.t.map((_, i) => keys.reduce((a, k) => a + cs.groups[k][i], 0));
    const x = (i) => L + ((W - L - R) * (i + 0.5)) / n;
    const y = (f) => T + (H - T - B) * (1 - f);
    let svg = `<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="share of answers">`;
    for (const f of [0, 0.25, 0.5, 0.75, 1]) {
      svg += `<line class="axis" x1="${L}" x2="${W - R}" y1="${y(f)}" y2="${y(f)}" stroke-dasharray="${f ? "2,3" : ""}"/>`;
      svg += `<text x="${L - 4}" y="${y(f) + 3}" text-anchor="end">${f * 100}%</text>`;
    }
    // One stacked bar per sample: each site's (service's) share of that interval's answers. An interval
    // without answers stays empty rather than pretending a share.
    const shares = {};
    const bw = Math.max(1, (W - L - R) / n - 1);
    for (let i = 0; i < n; ++i) {
      let acc = 0;
      if (!totals[i]) continue;
      for (const k of keys) {
        const v = cs.groups[k][i];
        if (!v) continue;
        const f = v / totals[i];
        const x0 = L + ((W - L - R) * i) / n;
        svg += `<rect x="${x0.toFixed(1)}" y="${y(acc + f).toFixed(1)}" width="${bw.toFixed(1)}" height="${(y(acc) - y(acc + f)).toFixed(1)}" fill="${colorOf(k)}"><title>${esc(k)}: ${v} (${(100 * f).toFixed(0)} %)</title></rect>`;
        acc += f;
      }
    }
    for (const k of keys) shares[k] = cs.groups[k].reduce((a, v) => a + v, 0);
    const span = (cs.t[n - 1] - cs.t[0]) / 1000;
    for (const f of [0, 0.5, 1]) {
      const i = Math.round(f * (n - 1));
      const ago = Math.round((cs.t[n - 1] - cs.t[i]) / 1000);
      svg += `<text x="${x(i)}" y="${H - 5}" text-anchor="${f === 0 ? "start" : f === 1 ? "end" : "middle"}">${ago ? "−" + fmtAge(ago) : "now"}</text>`;
    }
    svg += "</svg>";
    el.innerHTML = svg;
    const all = Object.values(shares).reduce((a, v) => a + v, 0);
    legend.innerHTML = keys.map((k) => `<span style="--c:${colorOf(k)}" data-key="${esc(k)}">${esc(k)} <b>${all ? ((100 * shares[k]) / all).toFixed(1) : "0.0"} %</b></span>`).join("");
    $("#chart-hint").textContent = `last ${fmtAge(span)}, one sample every ${state.history.interval_s} s`;
  }

  // ------------------------------------------------------------------------------------------ polling

  async function poll() {
    try {
      const [st, ev, hi] = await Promise.all([
        api("GET", "/v1/status"),
        api("GET", "/v1/events?since=" + state.lastSeq),
        api("GET", "/v1/history"),
      ]);
      if (st.status !== 200 || !st.body) throw new Error("status " + st.status);
      state.status = st.body;
      if (ev.status === 200 && ev.body) {
        if (ev.body.last_seq < state.lastSeq) state.events = [];  // the server restarted
        state.events = state.events.concat(ev.body.events).slice(-500);
        state.lastSeq = ev.body.last_seq;
      }
      if (hi.status === 200 && hi.body) state.history = hi.body;
      render();
      state.failures = 0;
      $("#live-dot").className = "dot ok";
      $("#live-text").textContent = "live · " + new Date().toISOString().substring(11, 19) + " UTC";
      document.body.dataset.loaded = "1";
    } catch (e) {
      state.failures++;
      $("#live-dot").className = "dot bad";
      $("#live-text").textContent = "server unreachable (" + e.message + ")";
    }
  }

  function render() {
    const st = state.status;
    if (!st) return;
    $("#zones").innerHTML = (st.zones || []).map((z) => `<b>${esc(z.name)}</b> serial ${z.serial}`).join(" · ");
    fillHostSelect($("#svc-host"), st);
    fillHostSelect($("#chart-host"), st);
    renderTiles(st);
    renderSites(st);
    renderServices(st);
    renderSources(st);
    renderQuorum(st);
    renderEvents();
    renderChart();
  }

  // ------------------------------------------------------------------------------------------ token, actions

  function renderToken() {
    const has = !!token();
    $("#token-form").hidden = false;
    $("#token").hidden = has;
    $("#token-set").hidden = has;
    $("#token-clear").hidden = !has;
    $("#token-state").className = has ? "on" : "muted";
    $("#token-state").textContent = has ? "operator: changes allowed" : "read-only";
  }

  async function act(btn) {
    const site = btn.dataset.site, address = btn.dataset.address, op = btn.dataset.op;
    const path = "/v1/sites/" + encodeURIComponent(site) + (address ? "/services/" + encodeURIComponent(address) : "") + "/" + op;
    btn.disabled = true;
    const r = await api("POST", path);
    if (r.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      renderToken();
      toast("The token was refused; the page is read-only again.", true);
    } else if (r.status !== 200) {
      toast((r.body && r.body.error) || "failed: " + r.status, true);
    } else {
      toast(`${address ? address + " (" + site + ")" : "site " + site} ${op === "drain" ? "drained" : "enabled"}`);
    }
    await poll();
  }

  // The explain form is a plain GET form (the server answers /?name=… itself, for browsers without
  // JavaScript); with JavaScript it asks GET /v1/explain in place, as text, and keeps the address bar on a
  // link to the same explanation. Explain is read-only: no token goes with it.
  function explainQuery(f) {
    const q = new URLSearchParams({ name: f.name.value.trim(), type: f.type.value });
    if (f.client.value.trim()) q.set("client", f.client.value.trim());
    if (f.ecs.value.trim()) q.set("ecs", f.ecs.value.trim());
    return q;
  }

  async function explain(ev) {
    if (ev) ev.preventDefault();
    const f = $("#explain-form"), out = $("#explain-out");
    if (!f.name.value.trim()) return;
    const q = explainQuery(f);
    const links = `<a href="/v1/explain?${esc(q.toString())}">JSON</a> · <a href="/v1/explain?${esc(q.toString())}&amp;format=text">text</a>`;
    try {
      const r = await fetch("/v1/explain?" + q.toString() + "&format=text", { cache: "no-store" });
      const text = await r.text();
      if (r.status === 200) {
        out.textContent = text;
        out.dataset.explained = "live";
      } else {
        let msg = text;
        try { msg = JSON.parse(text).error || text; } catch (e) { /* not JSON: show it as it came */ }
        out.textContent = "error: " + msg;
        out.dataset.explained = "live-error";
      }
      $("#explain-links").innerHTML = links;
      history.replaceState(null, "", "/?" + q.toString() + "#explain");
    } catch (e) {
      out.textContent = "error: " + e;
      out.dataset.explained = "live-error";
    }
  }

  function init() {
    // A link may carry the token in its fragment (/#token=…: never sent to a server); it moves into this
    // tab's sessionStorage and out of the address bar and history at once.
    const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (m) {
      sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
      history.replaceState(null, "", location.pathname + location.search);
    }
    renderToken();
    $("#token-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const v = $("#token").value.trim();
      if (!v) return;
      sessionStorage.setItem(TOKEN_KEY, v);
      $("#token").value = "";
      renderToken();
      render();
    });
    $("#token-clear").addEventListener("click", () => { sessionStorage.removeItem(TOKEN_KEY); renderToken(); render(); });
    document.addEventListener("click", (e) => {
      const b = e.target.closest("button[data-op]");
      if (b) act(b);
    });
    for (const id of ["#svc-host", "#chart-host", "#chart-by", "#ev-kind"]) $(id).addEventListener("change", render);
    $("#explain-form").addEventListener("submit", explain);
    // A link to /?name=… shows the explanation as of now, not as of when the server rendered the page.
    if (new URLSearchParams(location.search).get("name")) explain();
    poll();
    setInterval(poll, POLL_MS);
  }
  init();
})();
