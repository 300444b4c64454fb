/* forestlab reproduction report: sortable tables (progressive enhancement; the page reads the same without it).
   Click a column header of a table.sortable to sort its body by that column; click again to reverse. Numbers sort
   by value: the first number of a cell ("0.123 ± 0.010*" -> 0.123), its ± part and marks (▸ * ✓ ✗) ignored;
   cells without a number sort after the numbers, by their text. No fetch, no dependency. */
(function () {
  "use strict";
  var NUMBER = /[-+\u2212]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?/;

  function key(cell) {
    var text = (cell.textContent || "").trim();
    var m = text.match(NUMBER);
    if (m && text.indexOf(m[0]) <= 2) {  // a number at the start (after a mark such as the best-of-row ▸)
      return { num: parseFloat(m[0].replace("\u2212", "-")), text: text };
    }
    return { num: NaN, text: text };
  }

  function compare(a, b) {
    var an = isNaN(a.num), bn = isNaN(b.num);
    if (!an && !bn) { return a.num - b.num; }
    if (an !== bn) { return an ? 1 : -1; }
    return a.text.localeCompare(b.text, undefined, { numeric: true });
  }

  // the index of the column a header cell starts at (colspans of the cells before it counted)
  function columnOf(th) {
    var i = 0, cell = th.parentNode.firstElementChild, head = th.parentNode.parentNode;
    if (head.rows.length > 1 && th.parentNode !== head.rows[0]) {  // after the cells spanning every header row
      Array.prototype.forEach.call(head.rows[0].cells, function (c) { if (c.rowSpan > 1) { i += c.colSpan || 1; } });
    }
    while (cell && cell !== th) { i += cell.colSpan || 1; cell = cell.nextElementSibling; }
    return i;
  }

  function cellAt(row, col) {
    var i = 0, cell = row.firstElementChild;
    while (cell) {
      var span = cell.colSpan || 1;
      if (col < i + span) { return span === 1 ? cell : null; }
      i += span;
      cell = cell.nextElementSibling;
    }
    return null;
  }

  function sortBy(table, th) {
    var body = table.tBodies[0];
    if (!body) { return; }
    var col = columnOf(th);
    var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    Array.prototype.forEach.call(table.querySelectorAll("th[aria-sort]"), function (h) {
      h.removeAttribute("aria-sort");
    });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows).map(function (row, i) {
      var cell = cellAt(row, col);
      return { row: row, i: i, k: cell ? key(cell) : { num: NaN, text: "" } };
    });
    rows.sort(function (a, b) { return dir * compare(a.k, b.k) || a.i - b.i; });
    rows.forEach(function (r) { body.appendChild(r.row); });
  }

  function enhance(table) {
    var head = table.tHead;
    if (!head || !head.rows.length) { return; }
    // the last header row names the columns (the first may group them)
    var row = head.rows[head.rows.length - 1];
    var cells = Array.prototype.slice.call(row.cells);
    if (head.rows.length > 1) {  // header cells spanning both rows (the dataset column) sort too
      Array.prototype.forEach.call(head.rows[0].cells, function (c) { if (c.rowSpan > 1) { cells.push(c); } });
    }
    cells.forEach(function (th) {
      if ((th.colSpan || 1) !== 1) { return; }
      th.classList.add("sort-key");
      th.tabIndex = 0;
      th.title = (th.title ? th.title + "; " : "") + "click to sort";
      th.addEventListener("click", function () { sortBy(table, th); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, th); }
      });
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), enhance);
})();
