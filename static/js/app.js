// Small progressive enhancements; every page works without this file.
// Charts: data comes from <script type="application/json"> blocks (json_script), never inline code.
(function () {
  "use strict";

  function readJson(id) {
    var el = document.getElementById(id);
    if (!el) return null;
    try { return JSON.parse(el.textContent); } catch (e) { return null; }
  }

  // Okabe-Ito, colour-blind safe (the same order as planner.presentation.OKABE_ITO) (h/card)
  var PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442"];
  var lang = document.documentElement.lang || "en";
  function fmt(value) {
    return new Intl.NumberFormat(lang, { maximumFractionDigits: 0 }).format(value);
  }

  function short(text) {
    text = String(text || "");
    return text.length > 72 ? text.slice(0, 71) + "…" : text;
  }

  function markDrawn(canvas) { canvas.setAttribute("data-drawn", "true"); }

  function drawTco() {
    var canvas = document.getElementById("tco-chart");
    var data = readJson("tco-data");
    if (!canvas || !data || !window.Chart) return;
    var months = 0;
    data.series.forEach(function (s) { months = Math.max(months, s.data.length); });
    var labels = [];
    for (var m = 0; m < months; m++) labels.push(String(m));
    var markerLines = data.markers.map(function (mk) { return mk.month; });
    var chart = new window.Chart(canvas, {
      type: "line",
      data: {
        labels: labels,
        datasets: data.series.map(function (s, i) {
          // each option's colour and dash come with the data, as the HTML legend under the chart shows them
          var colour = s.color || PALETTE[i % PALETTE.length];
          return { label: (s.number ? s.number + " · " : "") + (s.short_label || s.label) +
                          (s.kind_label ? " · " + s.kind_label : ""), data: s.data,
                   borderColor: colour, backgroundColor: colour, borderDash: s.dash || [],
                   pointRadius: 0, borderWidth: 2, tension: 0 };
        })
      },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        interaction: { mode: "index", intersect: false },
        // the legend is the HTML list under the figure (#tco-legend): it takes the room it needs
        // and never overlaps the next heading, however many options there are
        plugins: { legend: { display: !document.getElementById("tco-legend") } },
        scales: {
          x: { title: { display: true, text: canvas.getAttribute("data-x-label") || "month" } },
          y: { title: { display: true, text: data.currency }, ticks: { callback: fmt } }
        }
      },
      plugins: [{
        id: "breakEvenMarkers",
        afterDatasetsDraw: function (c) {
          var x = c.scales.x, y = c.scales.y, ctx = c.ctx;
          ctx.save();
          ctx.strokeStyle = "#5b6475"; ctx.setLineDash([4, 4]); ctx.lineWidth = 1;
          markerLines.forEach(function (month) {
            var px = x.getPixelForValue(month);
            ctx.beginPath(); ctx.moveTo(px, y.top); ctx.lineTo(px, y.bottom); ctx.stroke();
          });
          ctx.restore();
        }
      }]
    });
    markDrawn(canvas);
    return chart;
  }

  function drawUncertainty() {
    var canvas = document.getElementById("uncertainty-chart");
    var data = readJson("uncertainty-data");
    if (!canvas || !data || !window.Chart || !data.labels.length) return;
    new window.Chart(canvas, {
      type: "bar",
      data: {
        labels: data.labels,
        datasets: [
          { label: "P10", data: data.p10, backgroundColor: "#9db4ea" },
          { label: "P50", data: data.p50, backgroundColor: "#2f5fd0" },
          { label: "P90", data: data.p90, backgroundColor: "#1d2330" }
        ]
      },
      options: { animation: false, indexAxis: "y", responsive: true, maintainAspectRatio: false,
                 plugins: { legend: { display: true, position: "top" },
                            tooltip: { callbacks: { title: function (items) { return data.labels[items[0].dataIndex]; } } } },
                 // the axis names the VAT basis of the figures (that of the totals in the table)
                 scales: { x: { title: { display: true, text: data.basis_label ? data.currency + ", " + data.basis_label : data.currency },
                                ticks: { callback: fmt } },
                           // long option names are shortened on the axis (the tooltip has them in full)
                           y: { ticks: { autoSkip: false, callback: function (v) { return short(data.labels[v]); } } } } }
    });
    markDrawn(canvas);
  }

  function drawMemory() {
    var canvas = document.getElementById("memory-chart");
    var data = readJson("memory-data");
    if (!canvas || !data || !window.Chart || !data.components.length) return;
    var datasets = data.components.map(function (c, i) {
      return { label: c.label, data: [c.gib], backgroundColor: PALETTE[i % PALETTE.length], stack: "used" };
    });
    if (data.vram_gib) {
      datasets.push({ label: data.vram_label, data: [data.vram_gib], backgroundColor: "rgba(0,0,0,0)",
                      borderColor: "#b00020", borderWidth: 2, stack: "vram" });
    }
    new window.Chart(canvas, {
      type: "bar",
      data: { labels: [data.gpu_label], datasets: datasets },
      options: { animation: false, indexAxis: "y", responsive: true, maintainAspectRatio: false,
                 scales: { x: { stacked: true, title: { display: true, text: "GiB" } }, y: { stacked: true } } }
    });
    markDrawn(canvas);
  }

  // --- the workload form: an htmx redraw never discards what was typed meanwhile ----------
  // A redraw answers with the values that were sent; anything the user changed while the
  // request was in flight is put back, field by field, once the new fields are in place.
  function snapshot(form) {
    var out = {};
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.type === "file" || el.name === "csrfmiddlewaretoken") return;
      if (el.type === "radio") { if (el.checked) out[el.name] = el.value; else if (!(el.name in out)) out[el.name] = ""; }
      else if (el.type === "checkbox") out[el.name] = el.checked ? "on" : "";
      else out[el.name] = el.value;
    });
    return out;
  }

  function restore(form, sent, now) {
    var redraw = null;
    Object.keys(now).forEach(function (name) {
      if (sent[name] === now[name]) return;
      var els = form.querySelectorAll('[name="' + name + '"]');
      Array.prototype.forEach.call(els, function (el) {
        if (el.type === "radio") el.checked = el.value === now[name];
        else if (el.type === "checkbox") el.checked = now[name] === "on";
        else el.value = now[name];
      });
      if (els.length && (name === "kind" || name === "model_source")) redraw = els[0];
    });
    // The kind changed again while the steps were on their way: draw the steps of the latest.
    if (redraw) redraw.dispatchEvent(new Event("change", { bubbles: true }));
  }

  document.addEventListener("htmx:beforeRequest", function (e) {
    var form = e.detail.elt && e.detail.elt.closest ? e.detail.elt.closest("form") : null;
    if (!form || !e.detail.xhr) return;
    e.detail.xhr.gpForm = form;
    e.detail.xhr.gpSent = snapshot(form);
  });
  document.addEventListener("htmx:beforeSwap", function (e) {
    var xhr = e.detail.xhr;
    if (xhr && xhr.gpForm) xhr.gpNow = snapshot(xhr.gpForm);
  });
  document.addEventListener("htmx:afterSwap", function (e) {
    var xhr = e.detail.xhr;
    if (xhr && xhr.gpForm && xhr.gpNow) restore(xhr.gpForm, xhr.gpSent, xhr.gpNow);
  });

  function drawCurve(canvasId, key, yLabel, data, xKey, xLabel) {
    var canvas = document.getElementById(canvasId);
    if (!canvas) return;
    xKey = xKey || "x";
    new window.Chart(canvas, {
      type: "line",
      data: {
        datasets: data.series.map(function (s, i) {
          var points = s.points.filter(function (p) { return p[xKey] != null && p[key] != null; });
          return { label: s.label, data: points.map(function (p) { return { x: p[xKey], y: p[key] }; }),
                   borderColor: PALETTE[i % PALETTE.length], backgroundColor: PALETTE[i % PALETTE.length],
                   pointRadius: 2, borderWidth: 2, tension: 0 };
        })
      },
      options: { animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
                 scales: { x: { type: "linear", title: { display: true, text: xLabel || data.x_label }, ticks: { callback: fmt } },
                           y: { type: "logarithmic", title: { display: true, text: yLabel } } } }
    });
    markDrawn(canvas);
  }

  function drawServingCurves() {
    var data = readJson("serving-curve-data");
    if (!data || !window.Chart || !data.series.length) return;
    drawCurve("serving-tpot-chart", "tpot", data.tpot_label, data);
    drawCurve("serving-ttft-chart", "ttft", data.ttft_label, data);
    // InferenceX's view: what a million tokens cost against the speed each user sees
    if (data.priced) drawCurve("serving-cost-chart", "cost", data.cost_label, data, "user", data.user_label);
  }

  function drawAll() {
    drawTco();
    drawUncertainty();
    drawMemory();
    drawServingCurves();
  }

  // == form (h/form) == copy a field's text (the share link) to the clipboard
  document.addEventListener("click", function (ev) {
    var button = ev.target.closest ? ev.target.closest("[data-copy]") : null;
    if (!button) return;
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) return;
    field.select();
    var done = function () { button.textContent = button.getAttribute("data-copied") || button.textContent; };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(field.value).then(done, function () { document.execCommand("copy"); done(); });
    } else {
      document.execCommand("copy");
      done();
    }
  });
  // the form's error summary takes the focus, so a keyboard or screen-reader user starts there
  var summary = document.getElementById("error-summary");
  if (summary) summary.focus();
  // == end form (h/form) ==

  // Deferred scripts run before DOMContentLoaded; the Chart.js file is deferred after this one.
  if (document.readyState === "complete") {
    drawAll();
  } else {
    document.addEventListener("DOMContentLoaded", drawAll);
  }
})();
