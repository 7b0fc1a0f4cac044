(function () {
  "use strict";
  function sortKey(cell) {
    if (!cell) return "";
    var v = cell.getAttribute("data-sort");
    return v === null ? cell.textContent.trim() : v;
  }
  function sortable(table) {
    var head = table.tHead && table.tHead.rows[0];
    var body = table.tBodies[0];
    if (!head || !body) return;
    var ths = Array.prototype.slice.call(head.cells);
    ths.forEach(function (th, i) {
      var b = document.createElement("button");
      b.type = "button";
      b.textContent = th.textContent;
      th.textContent = "";
      th.appendChild(b);
      b.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        ths.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows);
        var num = rows.every(function (r) {
          var c = r.cells[i];
          return c && c.hasAttribute("data-sort") && isFinite(parseFloat(c.getAttribute("data-sort")));
        });
        rows.sort(function (a, b) {
          var x = sortKey(a.cells[i]), y = sortKey(b.cells[i]);
          var d = num ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
          return asc ? d : -d;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), sortable);

  var input = document.getElementById("filter");
  if (!input) return;
  // Items inside another item (the findings of a family) go with it.
  var items = Array.prototype.filter.call(document.querySelectorAll("[data-search]"), function (el) {
    return el.parentElement.closest("[data-search]") === null;
  });
  var counter = document.getElementById("filter-count");
  document.getElementById("filter-box").hidden = false;
  function apply() {
    var q = input.value.trim().toLowerCase();
    var shown = 0, rows = 0;
    items.forEach(function (el) {
      var hit = q === "" || el.getAttribute("data-search").indexOf(q) >= 0;
      el.hidden = !hit;
      if (el.tagName === "TR") {
        rows++;
        if (hit) shown++;
      }
    });
    counter.textContent = q === "" ? "" : shown + " of " + rows + " rows shown";
  }
  input.addEventListener("input", apply);
  apply();
})();
