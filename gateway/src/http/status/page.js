"use strict";
(function () {
  var SVG = "http://www.w3.org/2000/svg", HOUR = 3600000, WIDTH = 600;
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) { e.textContent = text; }
    if (cls) { e.className = cls; }
    return e;
  }
  function show(v) { return v === null || v === undefined ? "\u2013" : String(v); }
  function secs(v, scale) { return typeof v === "number" ? (v * scale).toFixed(1) + " s" : "\u2013"; }
  function num(v) { return typeof v === "number" && !Number.isInteger(v) ? v.toFixed(2) : show(v); }
  function upstreams(facts) {
    var body = document.querySelector("#upstreams tbody"), rows = [];
    facts.upstreams.forEach(function (u) {
      var tr = el("tr"), d = u.last_death;
      tr.setAttribute("data-upstream", u.name);
      var death = d ? d.cause + " (" + d.detail + "), " +
        Math.round((facts.at_ms - d.at_ms) / 1000) + " s ago" : "\u2013";
      [[u.name], [u.state, "state " + u.state], [show(u.generation), "gen"], [secs(u.up_for_s, 1)],
       [death], [show(u.probe_rtt_ms)], [show(u.attempt)], [secs(u.next_attempt_in_ms, 0.001)],
       [show(u.host_sessions)]].forEach(function (c) { tr.appendChild(el("td", c[0], c[1])); });
      rows.push(tr);
    });
    body.replaceChildren.apply(body, rows);
  }
  function timeline(facts) {
    var row = 22, svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("width", "760");
    var rows = row * Math.max(1, facts.upstreams.length);
    svg.setAttribute("height", String(rows + 14));
    function x(at) { return 150 + WIDTH * (1 - Math.min(1, (facts.at_ms - at) / HOUR)); }
    function add(tag, attrs, text) {
      var e = document.createElementNS(SVG, tag);
      Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
      if (text !== undefined) { e.textContent = text; }
      svg.appendChild(e);
    }
    facts.upstreams.forEach(function (u, i) {
      var y = i * row;
      add("text", { x: 0, y: y + 12, "font-size": 12, fill: "#333" }, u.name);
      add("rect", { x: 150, y: y + 2, width: WIDTH, height: 14, fill: "#ddd" });
      u.timeline.forEach(function (m, j) {
        var from = x(m.at_ms), next = u.timeline[j + 1];
        var to = next ? x(next.at_ms) : x(facts.at_ms);
        var colour = m.kind === "ready" ? "#2a2" : "#d33";
        add("rect", { x: from.toFixed(1), y: y + 2, width: Math.max(1, to - from).toFixed(1),
          height: 14, fill: colour });
        add("rect", { x: (from - 1).toFixed(1), y: y, width: 2, height: 18, fill: colour });
      });
    });
    add("text", { x: 150, y: rows + 11, "font-size": 11, fill: "#666" }, "an hour ago");
    add("text", { x: 750, y: rows + 11, "font-size": 11, fill: "#666", "text-anchor": "end" }, "now");
    var box = document.getElementById("timeline");
    box.replaceChildren(svg);
  }
  function pairs(id, object) {
    var body = document.querySelector("#" + id + " tbody"), rows = [];
    Object.keys(object || {}).forEach(function (k) {
      var tr = el("tr");
      tr.appendChild(el("td", k));
      tr.appendChild(el("td", num(object[k])));
      rows.push(tr);
    });
    body.replaceChildren.apply(body, rows);
  }
  function tools(facts) {
    var body = document.querySelector("#tools tbody"), rows = [];
    facts.tools.forEach(function (t) {
      var tr = el("tr");
      [t.tool, t.calls, t.calls_per_s, t.p50_ms, t.p95_ms, t.error_rate].forEach(function (v) {
        tr.appendChild(el("td", num(v)));
      });
      rows.push(tr);
    });
    body.replaceChildren.apply(body, rows);
  }
  function draw(facts) {
    document.getElementById("replica").textContent = facts.replica + " · front " + facts.front;
    upstreams(facts);
    timeline(facts);
    document.getElementById("sessions-total").textContent = show(facts.sessions.total);
    document.getElementById("listen-streams").textContent = show(facts.sessions.listen_streams);
    pairs("by-revision", facts.sessions.by_revision);
    pairs("by-token", facts.sessions.by_token);
    tools(facts);
    pairs("answers", facts.answers);
    pairs("fleet", facts.fleet);
    var r = facts.reloads;
    pairs("reloads", { applied: r.applied, refused: r.refused,
      last: r.last === null ? null : JSON.stringify(r.last) });
  }
  var live = document.getElementById("live");
  var feed = new EventSource("/status/events");
  feed.onopen = function () { live.textContent = "live"; };
  feed.onerror = function () { live.textContent = "live updates paused; retrying"; };
  feed.onmessage = function (event) {
    try { draw(JSON.parse(event.data)); live.textContent = "live, " + new Date().toLocaleTimeString(); }
    catch (e) { live.textContent = "live update failed: " + e; }
  };
})();
