// The overview's live chart: orders created and paid per minute over the
// last hour, drawn with uPlot from the dashboard's JSON (polled every 5 s).
// The page's CSP allows only this origin's scripts: no inline code.
(function () {
  "use strict";
  var box = document.getElementById("orders-chart");
  if (!box || typeof uPlot === "undefined") {
    return;
  }
  var every = 5000;
  var plot = null;
  var tz = box.getAttribute("data-tz") || "UTC";
  var hhmm = uPlot.fmtDate("{HH}:{mm}");

  function local(ts) {
    return uPlot.tzDate(new Date(ts * 1e3), tz);
  }

  function width() {
    return Math.max(260, Math.min(box.clientWidth || 600, 960));
  }

  function options() {
    return {
      width: width(),
      height: 240,
      legend: { show: false },
      tzDate: local,
      scales: { y: { range: function (u, lo, hi) { return [0, Math.max(5, hi)]; } } },
      axes: [
        { values: function (u, ticks) { return ticks.map(function (t) { return hhmm(local(t)); }); } },
        { size: 40 }
      ],
      series: [
        {},
        { label: box.getAttribute("data-created"), stroke: "#0b4fb3", width: 2, fill: "rgba(11,79,179,0.08)", points: { show: false } },
        { label: box.getAttribute("data-paid"), stroke: "#15803d", width: 2, points: { show: false } }
      ]
    };
  }

  function sum(a) {
    var n = 0;
    for (var i = 0; i < a.length; i++) { n += a[i]; }
    return n;
  }

  function draw(d) {
    var data = [d.t, d.created, d.paid];
    if (plot === null) {
      box.textContent = "";
      plot = new uPlot(options(), data, box);
      plot.root.setAttribute("aria-hidden", "true");
    } else {
      plot.setData(data);
    }
    box.setAttribute("data-points", String(sum(d.created)));
    box.setAttribute("data-paid-points", String(sum(d.paid)));
  }

  function poll() {
    fetch(box.getAttribute("data-src"), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (d) { if (d) { draw(d); } })
      .catch(function () { /* the next poll tries again */ })
      .then(function () { setTimeout(poll, every); });
  }

  window.addEventListener("resize", function () {
    if (plot !== null) { plot.setSize({ width: width(), height: 240 }); }
  });
  poll();
})();
