// Pallas console: drag-and-drop for the pipeline panel, the reset dialog, htmx settings.
(function () {
  "use strict";
  function initPipeline(root) {
    var list = root.querySelector ? root.querySelector("#pipeline") : null;
    if (list && !list.dataset.sortable && window.Sortable) {
      list.dataset.sortable = "1";
      Sortable.create(list, {
        handle: ".handle",
        draggable: "li.proc",
        filter: ".fixed",
        forceFallback: true, // mouse / touch events: the same on phones and in tests
        animation: 120,
        onMove: function (evt) { return !evt.related.classList.contains("fixed"); },
        onEnd: function (evt) {
          if (evt.oldIndex === evt.newIndex) return;
          var ids = Array.prototype.map.call(
            list.querySelectorAll("li.proc:not(.fixed)"), function (li) { return li.dataset.id; });
          var form = document.getElementById("order-form");
          form.querySelector("[name=order]").value = ids.join(",");
          htmx.trigger(form, "submit");
        },
      });
    }
    var open = root.querySelector ? root.querySelector("#reset-open") : null;
    var dialog = root.querySelector ? root.querySelector("#reset-dialog") : null;
    if (open && dialog && !open.dataset.bound) {
      open.dataset.bound = "1";
      open.addEventListener("click", function () { dialog.showModal(); });
      dialog.querySelector(".cancel").addEventListener("click", function () { dialog.close(); });
    }
  }
  // the log tail: newest line in view (on load and after each auto-refresh)
  function scrollLog(root) {
    var log = root.querySelector ? root.querySelector("#log-lines") : null;
    if (!log && root.id === "log-lines") log = root;
    if (log) log.scrollTop = log.scrollHeight;
  }
  // config page: filter keys as one types (key or description); groups with a match open
  function filterConfig(input) {
    var needle = input.value.trim().toLowerCase();
    var groups = document.querySelectorAll("details.cfg-group");
    var shown = 0;
    Array.prototype.forEach.call(groups, function (group) {
      var hits = 0;
      Array.prototype.forEach.call(group.querySelectorAll("tr.cfg-key"), function (row) {
        var text = (row.dataset.key + " " + row.dataset.desc).toLowerCase();
        var hit = !needle || text.indexOf(needle) >= 0;
        row.classList.toggle("hidden", !hit);
        if (hit) hits += 1;
      });
      group.classList.toggle("hidden", hits === 0);
      group.open = !!needle && hits > 0;
      shown += hits;
    });
    var count = document.getElementById("config-count");
    if (count) count.textContent = (needle ? "筛选“" + input.value.trim() + "”：" : "") + shown + " 个键";
  }
  document.addEventListener("input", function (evt) {
    if (evt.target.id === "config-filter") filterConfig(evt.target);
  });
  // config page: "改" puts the key and its current value into the edit form
  document.addEventListener("click", function (evt) {
    var button = evt.target.closest ? evt.target.closest("button.cfg-edit") : null;
    if (!button) return;
    document.getElementById("edit-key").value = button.dataset.key;
    var value = document.getElementById("edit-value");
    value.value = button.dataset.value;
    value.scrollIntoView({ block: "center" });
    value.focus();
  });
  // no inline handlers (the console's CSP allows scripts from 'self' only)
  document.addEventListener("submit", function (evt) {
    var message = evt.target.getAttribute && evt.target.getAttribute("data-confirm");
    if (message && !window.confirm(message)) evt.preventDefault();
  }, true);
  document.addEventListener("change", function (evt) {
    if (evt.target.hasAttribute && evt.target.hasAttribute("data-autosubmit")) evt.target.form.submit();
  });
  document.addEventListener("DOMContentLoaded", function () {
    if (window.htmx) {
      htmx.config.allowEval = false;
      // a rejected change (422) still replaces the panel, so its error message is shown
      htmx.config.responseHandling = [
        { code: "204", swap: false },
        { code: "[23]..", swap: true },
        { code: "422", swap: true },
        { code: "[45]..", swap: false, error: true },
      ];
      htmx.onLoad(initPipeline); // content swapped in later
      htmx.onLoad(scrollLog);
    }
    initPipeline(document);
    scrollLog(document);
  });
})();
