// stampede's live charts: every chart figure of the page marked data-live holds its data as
// JSON (a script element of type application/json, written by report::live) beside a
// static SVG drawing of the same chart (report::svg). This script draws each one again with
// uPlot (vendored beside this file, https://github.com/leeoniya/uPlot), which adds what the SVG
// cannot: the values under the cursor in the legend, a drag to zoom into a range of x (double
// click or "reset zoom" to go back), and a click on a legend entry to hide or show a series.
// The SVG stays in the page for print (the stylesheet shows it there) and for readers without
// scripts. Must not fetch anything (the report is one file that opens offline) and must never
// contain a closing-tag sequence or an HTML comment opener (it is inlined in a script element;
// report::live's tests check).
(function () {
  "use strict";
  var charts = {};
  window.stampedeCharts = charts;

  // A value as the legend shows it: six significant digits, no trailing zeros.
  function num(v) {
    if (v == null || !isFinite(v)) return "\u2014";
    return String(Number(v.toPrecision(6)));
  }

  // A value as an axis shows it, as report::svg::short does: 950, 1.2k, 3.4M.
  function short(v) {
    if (v == null || !isFinite(v)) return "";
    var a = Math.abs(v), x = v, s = "";
    if (a >= 1e9) { x = v / 1e9; s = "G"; } else if (a >= 1e6) { x = v / 1e6; s = "M"; }
    else if (a >= 1e4) { x = v / 1e3; s = "k"; }
    return String(Number(x.toPrecision(4))) + s;
  }

  // Cumulative values of the series still shown, first at the bottom (uPlot's stacked-area
  // demo, demos/stack.js: the areas are bands between each series and the one under it).
  function stack(d, shown) {
    var n = d.x.length, acc = new Array(n).fill(0), ys = [];
    d.series.forEach(function (s, k) {
      ys.push(shown[k] ? s.y.map(function (v, i) { return (acc[i] += v == null ? 0 : Math.max(v, 0)); }) : s.y.slice());
    });
    return ys;
  }

  function build(fig) {
    var d = JSON.parse(fig.querySelector("script.chart-data").textContent);
    var stacked = d.stacked, m = d.series.length;
    // uPlot's series 1..m; a stack is listed top first (as the SVG legend is), so series k of
    // the data is uPlot's m - k.
    var order = d.series.map(function (_, k) { return stacked ? m - 1 - k : k; });
    var shown = d.series.map(function () { return true; });
    function data() {
      var ys = stacked ? stack(d, shown) : d.series.map(function (s) {
        return d.y_log ? s.y.map(function (v) { return v != null && v > 0 ? v : null; }) : s.y;
      });
      return [d.x].concat(order.map(function (k) { return ys[k]; }));
    }
    function bands() {
      var b = [];
      if (!stacked) return b;
      // Each shown series fills down to the next shown one under it.
      for (var k = m - 1; k > 0; k--) {
        if (!shown[k]) continue;
        for (var j = k - 1; j >= 0 && !shown[j]; j--);
        if (j >= 0) b.push({ series: [m - k, m - j], fill: d.series[k].color });
      }
      return b;
    }
    var xs = d.x, ticks = d.x_ticks;
    var series = [{
      label: d.x_label,
      value: function (u, v) {
        if (v == null) return "\u2014";
        if (ticks) for (var i = 0; i < ticks.length; i++) if (ticks[i][0] === v) return ticks[i][1];
        return num(v);
      }
    }];
    order.forEach(function (k) {
      var s = d.series[k];
      series.push({
        label: s.name,
        stroke: s.color,
        width: stacked ? 0.5 : 1.8,
        dash: s.dashed ? [5, 3] : undefined,
        fill: stacked ? s.color : undefined,
        spanGaps: true,
        points: { show: !stacked && xs.length <= 60, size: 4.4 },
        // A stack shows each series' own value, not the running total it is drawn at.
        value: function (u, v, si, i) { return num(i == null ? null : s.y[i]); }
      });
    });
    var top = Math.max(d.y_max || 0, d.reference ? d.reference.y : 0);
    var y = d.y_log ? { distr: 3, log: 10 } : {
      range: function (u, lo, hi) {
        var t = Math.max(hi || 0, top);
        return [Math.min(0, lo || 0), t > 0 ? t * 1.05 : 1];
      }
    };
    var xaxis = { label: d.x_label, labelSize: 18, size: 34, values: function (u, sp) { return sp.map(short); } };
    if (ticks) {
      xaxis.splits = function (u) {
        var lo = u.scales.x.min, hi = u.scales.x.max;
        return ticks.map(function (t) { return t[0]; }).filter(function (t) { return t >= lo - 1e-9 && t <= hi + 1e-9; });
      };
      xaxis.values = function (u, sp) {
        return sp.map(function (v) {
          for (var i = 0; i < ticks.length; i++) if (ticks[i][0] === v) return ticks[i][1];
          return short(v);
        });
      };
    }
    var reset = document.createElement("button");
    reset.type = "button";
    reset.className = "chart-reset";
    reset.textContent = "reset zoom";
    reset.hidden = true;
    function zoomed(u) {
      return u.scales.x.min > xs[0] + 1e-12 || u.scales.x.max < xs[xs.length - 1] - 1e-12;
    }
    var opts = {
      width: size(fig).w,
      height: size(fig).h,
      series: series,
      bands: bands(),
      // x from the first to the last point exactly (what "reset zoom" returns to).
      scales: { x: { time: false, range: function (u, lo, hi) { return lo === hi ? [lo - 1, hi + 1] : [lo, hi]; } }, y: y },
      axes: [xaxis, {
        label: d.y_label, labelSize: 18, size: 52,
        values: function (u, sp) { return sp.map(short); }
      }],
      cursor: { drag: { x: true, y: false, setScale: true } },
      legend: { live: true },
      hooks: {
        draw: [function (u) { overlay(u, d); }],
        setScale: [function (u, key) { if (key === "x") reset.hidden = !zoomed(u); }],
        setSeries: [function (u, si, o) {
          if (!stacked || si == null || o.show == null) return;
          shown[order[si - 1]] = o.show;
          u.delBand(null);
          bands().forEach(function (b) { u.addBand(b); });
          u.setData(data());
        }]
      }
    };
    var box = document.createElement("div");
    box.className = "live";
    fig.insertBefore(box, fig.firstChild);
    var u = new uPlot(opts, data(), box);
    reset.addEventListener("click", function () {
      u.setScale("x", { min: xs[0], max: xs[xs.length - 1] });
    });
    box.appendChild(reset);
    fig.setAttribute("data-drawn", "");
    charts[fig.id] = u;
  }

  // Event markers (vertical, labelled) and the reference line (horizontal), on the canvas above
  // the series, in the SVG's colours.
  function overlay(u, d) {
    var c = u.ctx, b = u.bbox, r = uPlot.pxRatio;
    c.save();
    c.beginPath();
    c.rect(b.left, b.top, b.width, b.height);
    c.clip();
    c.font = Math.round(10 * r) + "px sans-serif";
    c.lineWidth = r;
    (d.markers || []).forEach(function (mk) {
      var x = u.valToPos(mk.x, "x", true);
      if (x < b.left || x > b.left + b.width) return;
      c.strokeStyle = c.fillStyle = "#7c3aed";
      c.setLineDash([2 * r, 3 * r]);
      c.beginPath();
      c.moveTo(x, b.top);
      c.lineTo(x, b.top + b.height);
      c.stroke();
      c.fillText(mk.label, x + 3 * r, b.top + 10 * r);
    });
    if (d.reference) {
      var y = u.valToPos(d.reference.y, "y", true);
      c.strokeStyle = c.fillStyle = "#c5221f";
      c.setLineDash([4 * r, 3 * r]);
      c.beginPath();
      c.moveTo(b.left, y);
      c.lineTo(b.left + b.width, y);
      c.stroke();
      c.textAlign = "end";
      // Above the line, or under it when it runs along the top of the plot.
      var ly = y - 4 * r < b.top + 10 * r ? y + 12 * r : y - 4 * r;
      c.fillText(d.reference.label, b.left + b.width - 4 * r, ly);
    }
    c.restore();
  }

  // The chart's size from its figure's width, in the SVG's proportions (640 by 260, of which
  // the plot takes the most).
  function size(fig) {
    var w = Math.max(240, Math.floor(fig.clientWidth || 640));
    return { w: w, h: Math.max(160, Math.min(360, Math.round(w * 0.4))) };
  }

  function start() {
    var figs = document.querySelectorAll("figure.chart[data-live]");
    for (var i = 0; i < figs.length; i++) {
      try {
        build(figs[i]);
      } catch (e) {
        // The static drawing stays; say why in the console.
        console.error("stampede chart " + figs[i].id + ": " + e);
      }
    }
    var pending = null;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(function () {
        Object.keys(charts).forEach(function (id) {
          var fig = document.getElementById(id);
          charts[id].setSize(size(fig));
        });
      }, 100);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
