/* clad report figures drawn by the browser: each <div class="chart" data-chart="FILE" data-id="ID">
   loads FILE (a script calling cladChart(ID, spec)) when it scrolls into view, and Vega-Lite draws
   the spec there (vega, vega-lite and vega-embed are vendored beside this file under their BSD
   licences). A figure that cannot be drawn says so in its place and in the console. */
(function () {
  "use strict";
  var waiting = {};
  function fail(el, why) {
    el.classList.add("failed");
    el.textContent = "This figure could not be drawn: " + why;
    if (window.console) { console.error("clad figure " + el.getAttribute("data-id") + ": " + why); }
  }
  window.cladChart = function (id, spec) {
    var el = waiting[id];
    if (!el) { return; }
    delete waiting[id];
    if (!window.vegaEmbed) { fail(el, "the Vega scripts did not load"); return; }
    window.vegaEmbed(el, spec, {renderer: "svg", actions: {export: true, source: false, compiled: false, editor: false}})
      .then(function () { el.style.minHeight = ""; el.classList.add("drawn"); })
      .catch(function (e) { fail(el, String(e && e.message || e)); });
  };
  function load(el) {
    if (el.getAttribute("data-state")) { return; }
    el.setAttribute("data-state", "loading");
    waiting[el.getAttribute("data-id")] = el;
    var s = document.createElement("script");
    s.src = el.getAttribute("data-chart");
    s.onerror = function () { fail(el, "its file " + s.src + " is missing"); };
    document.head.appendChild(s);
  }
  function setUp() {
    var charts = Array.prototype.slice.call(document.querySelectorAll("div.chart[data-chart]"));
    if (!("IntersectionObserver" in window)) { charts.forEach(load); return; }
    var seen = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) { if (e.isIntersecting) { seen.unobserve(e.target); load(e.target); } });
    }, {rootMargin: "800px 0px"});
    charts.forEach(function (el) { seen.observe(el); });
  }
  window.cladDrawAllCharts = function () {  /* draw every figure now (printing, checks) */
    Array.prototype.slice.call(document.querySelectorAll("div.chart[data-chart]")).forEach(load);
  };
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", setUp); } else { setUp(); }
})();
