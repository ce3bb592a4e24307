// codecal report.html: sorting, filtering, code highlighting and the
// drill-down from a reliability bar (or a confidence range) to its items.
// The page reads without it; nothing here fetches anything.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);

  // ---- Sorting: click a header; numbers sort as numbers ("0.12 [0.1, 0.2]" by 0.12).
  function sortKey(text) {
    const n = parseFloat(text);
    return Number.isNaN(n) ? text.trim().toLowerCase() : n;
  }
  function compare(a, b) {
    if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
    return typeof a === "number" ? -1 : 1;
  }
  function makeSortable(table) {
    table.querySelectorAll("thead th").forEach((th, column) => {
      th.addEventListener("click", () => {
        const up = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("thead th").forEach((other) => other.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", up ? "ascending" : "descending");
        th.dataset.arrow = up ? " ▲" : " ▼";
        const body = table.tBodies[0];
        const rows = Array.from(body.rows).filter((r) => !r.classList.contains("expanded-row"));
        body.querySelectorAll("tr.expanded-row").forEach((r) => r.remove());
        rows.sort((r1, r2) => {
          const c = compare(sortKey(r1.cells[column].textContent), sortKey(r2.cells[column].textContent));
          return up ? c : -c;
        });
        rows.forEach((r) => body.appendChild(r));
      });
    });
  }
  document.querySelectorAll("table.sortable").forEach(makeSortable);

  // ---- Code: collapsed when long, with "show all"; lightly highlighted.
  const KEYWORDS = new Set(("False None True and as assert async await break class continue def del elif else " +
    "except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield " +
    "abstract boolean byte case catch char const default do double enum extends final float goto implements " +
    "instanceof int interface long native new package private protected public short static super switch " +
    "synchronized this throw throws transient void volatile null true false var let function").split(" "));
  const TOKEN = /("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|#[^\n]*|\/\/[^\n]*|\/\*[\s\S]*?\*\/|\b\d[\d_.]*(?:[eE][+-]?\d+)?\b|\b[A-Za-z_]\w*\b)/g;
  function highlight(code) {
    const text = code.textContent;
    const out = document.createDocumentFragment();
    let last = 0;
    for (const match of text.matchAll(TOKEN)) {
      const token = match[0];
      let kind = null;
      if (/^["']/.test(token)) kind = "str";
      else if (/^(#|\/\/|\/\*)/.test(token)) kind = "com";
      else if (/^\d/.test(token)) kind = "num";
      else if (KEYWORDS.has(token)) kind = "kw";
      if (!kind) continue;
      out.append(text.slice(last, match.index));
      const span = document.createElement("span");
      span.className = "tok-" + kind;
      span.textContent = token;
      out.append(span);
      last = match.index + token.length;
    }
    out.append(text.slice(last));
    code.replaceChildren(out);
  }
  function prepareCode(root) {
    root.querySelectorAll("pre.code").forEach((pre) => {
      if (pre.dataset.ready) return;
      pre.dataset.ready = "1";
      highlight(pre.querySelector("code"));
      if (pre.textContent.split("\n").length > 6) {
        pre.classList.add("collapsed");
        const button = document.createElement("button");
        button.type = "button";
        button.className = "show-all";
        button.textContent = "show all";
        button.addEventListener("click", () => {
          const collapsed = pre.classList.toggle("collapsed");
          button.textContent = collapsed ? "show all" : "show less";
        });
        pre.after(button);
      }
    });
  }
  // Highlight an item's code when it is first opened, not all at load.
  document.querySelectorAll("details.item").forEach((details) => {
    details.addEventListener("toggle", () => details.open && prepareCode(details));
  });
  function openItem(index) {
    const details = document.getElementById("item-" + index);
    if (details) { details.open = true; prepareCode(details); }
  }
  window.addEventListener("hashchange", () => {
    const m = /^#item-(\d+)$/.exec(location.hash);
    if (m) openItem(m[1]);
  });

  // ---- Item filter.
  const filter = document.querySelector("#items .filter");
  if (filter) {
    filter.hidden = false;
    const input = filter.querySelector("input");
    input.addEventListener("input", () => {
      const needle = input.value.toLowerCase();
      document.querySelectorAll("details.item").forEach((details) => {
        details.hidden = needle !== "" && !details.textContent.toLowerCase().includes(needle);
      });
    });
  }

  // ---- Drill-down.
  function fmt(value) { return value === null || value === undefined ? "-" : value.toFixed(3); }
  function cell(text, className) {
    const td = document.createElement("td");
    td.textContent = text;
    if (className) td.className = className;
    return td;
  }
  function expandRow(row, index) {
    const next = row.nextElementSibling;
    if (next && next.classList.contains("expanded-row")) { next.remove(); return; }
    const source = document.getElementById("item-" + index);
    const extra = document.createElement("tr");
    extra.className = "expanded-row";
    const td = document.createElement("td");
    td.colSpan = row.cells.length;
    Array.from(source.children).filter((child) => child.tagName !== "SUMMARY")
      .forEach((child) => td.appendChild(child.cloneNode(true)));
    td.querySelectorAll("pre.code").forEach((pre) => delete pre.dataset.ready);
    td.querySelectorAll("button.show-all").forEach((b) => b.remove());
    extra.appendChild(td);
    row.after(extra);
    prepareCode(td);
  }
  function listItems(section, title, entries) {
    const drill = section.querySelector(".drill");
    drill.hidden = false;
    drill.replaceChildren();
    const heading = document.createElement("h4");
    heading.textContent = title + " (" + entries.length + " items)";
    drill.appendChild(heading);
    if (entries.length === 0) return;
    const table = document.createElement("table");
    table.className = "items sortable";
    const head = table.createTHead().insertRow();
    ["#", "item", "raw", "rescaled", "correct", ...data.number_names, ...data.label_names, "answer", ""].forEach((name) => {
      const th = document.createElement("th");
      th.textContent = name;
      head.appendChild(th);
    });
    const body = table.createTBody();
    entries.forEach((entry, rank) => {
      const [index, raw, rescaled, correct] = entry;
      const [id, headline, numbers, labels] = data.items[index];
      const row = body.insertRow();
      row.dataset.id = id;
      row.dataset.item = index;
      row.appendChild(cell(String(rank + 1)));
      const link = document.createElement("a");
      link.href = "#item-" + index;
      link.textContent = id;
      const idCell = cell("");
      idCell.appendChild(link);
      row.appendChild(idCell);
      row.appendChild(cell(fmt(raw)));
      row.appendChild(cell(fmt(rescaled)));
      row.appendChild(cell(correct ? "yes" : "no", correct ? "correct-yes" : "correct-no"));
      numbers.forEach((n) => row.appendChild(cell(fmt(n))));
      labels.forEach((text) => row.appendChild(cell(text)));
      row.appendChild(cell(headline, "headline"));
      const more = document.createElement("button");
      more.type = "button";
      more.textContent = "details";
      more.addEventListener("click", () => expandRow(row, index));
      const moreCell = cell("");
      moreCell.appendChild(more);
      row.appendChild(moreCell);
    });
    const scroll = document.createElement("div");
    scroll.className = "scroll";
    scroll.appendChild(table);
    drill.appendChild(scroll);
    makeSortable(table);
  }
  // Entries: [item, raw, rescaled, correct, rawBar, rescaledBar]; surest first.
  function byConfidence(position) {
    return (a, b) => (b[position] - a[position]) || (data.items[a[0]][0] < data.items[b[0]][0] ? -1 : 1);
  }
  document.querySelectorAll("section.cell").forEach((section) => {
    const cellData = data.cells[Number(section.dataset.cell)];
    section.querySelectorAll("svg [data-panel]").forEach((panel) => {
      const which = panel.dataset.panel;
      const barPosition = which === "raw" ? 4 : 5;
      const confidencePosition = which === "raw" ? 1 : 2;
      panel.querySelectorAll("[data-bar]").forEach((bar) => {
        bar.addEventListener("click", () => {
          section.querySelectorAll("svg .chosen").forEach((b) => b.classList.remove("chosen"));
          bar.classList.add("chosen");
          const k = Number(bar.dataset.bar);
          const entries = cellData.items.filter((e) => e[barPosition] === k)
            .sort(byConfidence(confidencePosition));
          listItems(section, which + " confidence in (" + bar.dataset.lo + ", " + bar.dataset.hi + "]", entries);
        });
      });
    });
    const form = section.querySelector("form.range");
    form.hidden = false;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const which = form.elements.which.value;
      const low = Number(form.elements.low.value);
      const high = Number(form.elements.high.value);
      const position = which === "raw" ? 1 : 2;
      const entries = cellData.items
        .filter((e) => e[position] !== null && e[position] >= low && e[position] <= high)
        .sort(byConfidence(position));
      listItems(section, which + " confidence in [" + low + ", " + high + "]", entries);
    });
  });
  const start = /^#item-(\d+)$/.exec(location.hash);
  if (start) openItem(start[1]);
})();
