/* clad report tables: sortable headers (tablesort, vendored beside this file under its MIT licence)
   and a filter box per table: rows that do not contain every word typed are hidden. */
(function () {
  "use strict";
  function words(text) { return text.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 0; }); }
  function setUp() {
    var tables = document.querySelectorAll("table.sortable");
    for (var i = 0; i < tables.length; i++) {
      if (window.Tablesort) { new window.Tablesort(tables[i]); }
    }
    var boxes = document.querySelectorAll("input[data-filter]");
    for (var k = 0; k < boxes.length; k++) {
      (function (box) {
        var table = document.getElementById(box.getAttribute("data-filter"));
        var count = document.getElementById(box.getAttribute("data-filter") + "-count");
        if (!table || !table.tBodies || !table.tBodies.length) { return; }
        var rows = Array.prototype.slice.call(table.tBodies[0].rows);
        var texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
        box.addEventListener("input", function () {
          var want = words(box.value), shown = 0;
          for (var j = 0; j < rows.length; j++) {
            var keep = want.every(function (w) { return texts[j].indexOf(w) >= 0; });
            rows[j].style.display = keep ? "" : "none";
            if (keep) { shown++; }
          }
          if (count) { count.textContent = shown + " of " + rows.length + " rows"; }
        });
      })(boxes[k]);
    }
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", setUp); } else { setUp(); }
})();
