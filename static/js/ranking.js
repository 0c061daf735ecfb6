// K-way ranking pages (annotation/kinds/ranking.py). The rank selects are the answer, so
// the page works without this script; with it:
// - a focused response takes a rank from a digit key (0 is 10); without ties, the response
//   that held that rank takes the old one;
// - ArrowUp / ArrowDown move the focused response (a conversation's own text, focusable as
//   it scrolls, keeps them for scrolling), and dragging moves any: the ranks then follow
//   the list's order;
// - the list keeps itself in rank order (unranked responses last).
// Listeners sit on the document, so they serve every item the page shows in place.
(function () {
  "use strict";
  var dragged = null;

  function listOf(item) { return item.closest(".rank-list"); }
  function itemsOf(list) { return Array.prototype.slice.call(list.querySelectorAll(".rank-item")); }
  function selectOf(item) { return item.querySelector("select"); }
  function rankOf(item) {
    var value = selectOf(item).value;
    return value ? parseInt(value, 10) : Infinity;
  }
  function tiesAllowed(list) {
    return list.closest(".ranking").getAttribute("data-allow-ties") === "1";
  }

  function sortByRank(list, focused) {
    itemsOf(list)
      .map(function (item, index) { return { item: item, rank: rankOf(item), index: index }; })
      .sort(function (a, b) { return (a.rank - b.rank) || (a.index - b.index); })
      .forEach(function (entry) { list.appendChild(entry.item); });
    if (focused) focused.focus();
  }

  function numberByOrder(list) {
    itemsOf(list).forEach(function (item, index) { selectOf(item).value = String(index + 1); });
  }

  function giveRank(item, rank) {
    var list = listOf(item);
    if (rank < 1 || rank > itemsOf(list).length) return false;
    var old = selectOf(item).value;
    if (!tiesAllowed(list)) {
      itemsOf(list).forEach(function (other) {
        if (other !== item && selectOf(other).value === String(rank)) selectOf(other).value = old;
      });
    }
    selectOf(item).value = String(rank);
    sortByRank(list, item);
    return true;
  }

  function move(item, by) {
    var list = listOf(item);
    var items = itemsOf(list);
    var to = items.indexOf(item) + by;
    if (to < 0 || to >= items.length) return;
    list.insertBefore(item, by < 0 ? items[to] : items[to].nextSibling);
    numberByOrder(list);
    item.focus();
  }

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var item = target && target.closest ? target.closest(".rank-item") : null;
    if (!item || target.tagName === "SELECT") return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (/^[0-9]$/.test(event.key)) {
      if (giveRank(item, event.key === "0" ? 10 : parseInt(event.key, 10))) event.preventDefault();
    } else if ((event.key === "ArrowUp" || event.key === "ArrowDown") && target === item) {
      // Inside a conversation (focusable, as it scrolls) the arrows scroll it instead.
      move(item, event.key === "ArrowUp" ? -1 : 1);
      event.preventDefault();
    }
  });

  document.addEventListener("change", function (event) {
    var item = event.target.closest && event.target.closest(".rank-item");
    if (item && event.target.tagName === "SELECT") sortByRank(listOf(item), null);
  });

  document.addEventListener("dragstart", function (event) {
    dragged = event.target.closest && event.target.closest(".rank-item");
    if (!dragged) return;
    dragged.classList.add("dragging");
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", dragged.getAttribute("data-field"));
  });

  document.addEventListener("dragover", function (event) {
    var over = event.target.closest && event.target.closest(".rank-item");
    if (!dragged || !over || over === dragged || listOf(over) !== listOf(dragged)) return;
    event.preventDefault();
    var box = over.getBoundingClientRect();
    var after = event.clientY > box.top + box.height / 2;
    listOf(over).insertBefore(dragged, after ? over.nextSibling : over);
  });

  document.addEventListener("drop", function (event) {
    if (!dragged) return;
    event.preventDefault();
  });

  document.addEventListener("dragend", function () {
    if (!dragged) return;
    dragged.classList.remove("dragging");
    numberByOrder(listOf(dragged));
    dragged = null;
  });
})();
