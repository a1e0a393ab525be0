// The dataset page's bulk selection: tick rows, the whole page, or every transcript the
// filters match, and say what is selected; and its sections below the table, which say so
// in place when they cannot be fetched. The table is swapped by htmx, so everything here
// listens on the document. No inline script anywhere: this file is it.
(function () {
  "use strict";

  const ROW = "#bulk-form [data-testid='select-row']";

  function describe(form) {
    const rows = Array.from(form.querySelectorAll(ROW));
    const allMatching = form.querySelector("[data-testid='select-all-matching']");
    const count = form.querySelector("[data-testid='bulk-count']");
    const apply = form.querySelector("[data-testid='bulk-apply']");
    const page = document.querySelector("[data-testid='select-page']");
    const ticked = rows.filter((row) => row.checked).length;
    rows.forEach((row) => {
      row.disabled = allMatching.checked;
      row.closest("tr").classList.toggle("selected", allMatching.checked || row.checked);
    });
    if (page) {
      page.disabled = allMatching.checked;
      page.checked = allMatching.checked || (ticked > 0 && ticked === rows.length);
      page.indeterminate = !allMatching.checked && ticked > 0 && ticked < rows.length;
    }
    const total = Number(form.dataset.total);
    const selected = allMatching.checked ? total : ticked;
    if (allMatching.checked) {
      const about = form.dataset.estimated ? "about " : "";
      count.textContent = `All ${about}${total} matching selected`;
    } else {
      count.textContent = ticked ? `${ticked} selected` : "None selected";
    }
    form.dataset.selected = String(selected);
    apply.disabled = selected === 0;
  }

  document.addEventListener("change", (event) => {
    const form = document.getElementById("bulk-form");
    if (!form || !event.target.closest) return;
    if (event.target.matches("[data-testid='select-page']")) {
      form.querySelectorAll(ROW).forEach((row) => {
        row.checked = event.target.checked;
      });
    }
    if (event.target.closest("#bulk-form") || event.target.matches("[data-testid='select-page']")) {
      describe(form);
    }
  });

  // A table swapped in (a filter, a page, an action done) starts with nothing selected.
  document.addEventListener("htmx:afterSettle", () => {
    const form = document.getElementById("bulk-form");
    if (form) describe(form);
  });
  document.addEventListener("DOMContentLoaded", () => {
    const form = document.getElementById("bulk-form");
    if (form) describe(form);
  });

  // The filters come back with every answer (their errors, the label picker); the text field
  // the user is in is never swapped: it keeps what was typed since the request, and the focus.
  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const live = event.detail.target;
    const fresh = event.detail.fragment;
    if (!live || live.id !== "filter-fields" || !fresh || !fresh.querySelector) return;
    // A text field only: a ticked box or a picked option is the server's to show back (the
    // page kept in the history is what the server wrote).
    const focused = document.activeElement;
    if (!focused || !focused.id || !live.contains(focused)) return;
    if (!focused.matches("textarea, input:not([type=checkbox]):not([type=radio])")) return;
    const incoming = fresh.querySelector("#" + CSS.escape(focused.id));
    if (incoming) incoming.setAttribute("hx-preserve", "true");
  });

  // The sections below the table (members, import, export, queues) come after it, each
  // fetched by its placeholder. One that cannot be had says so in place, with a way to ask
  // again, rather than staying blank or showing an error page inside the page.
  const SECTION = "[data-deferred-section]";

  function sectionFailed(placeholder, why) {
    placeholder.removeAttribute("aria-busy");
    placeholder.dataset.failed = "true";
    const status = placeholder.querySelector("[data-testid='section-status']");
    status.textContent = `This section could not be loaded (${why}). `;
    const again = document.createElement("button");
    again.type = "button";
    again.className = "small";
    again.dataset.action = "section-retry";
    again.textContent = "Try again";
    status.append(again);
  }

  document.addEventListener("htmx:beforeSwap", (event) => {
    const placeholder = event.detail.elt;
    if (!placeholder.matches || !placeholder.matches(SECTION)) return;
    const code = event.detail.xhr.status;
    if (code >= 200 && code < 300) return;
    // Error answers are whole pages (or nothing): not what goes inside this one.
    event.detail.shouldSwap = false;
    event.detail.isError = false;
    sectionFailed(placeholder, code === 403 ? "not allowed" : `the server answered ${code}`);
  });
  document.addEventListener("htmx:sendError", (event) => {
    const placeholder = event.detail.elt;
    if (placeholder.matches && placeholder.matches(SECTION)) sectionFailed(placeholder, "no answer");
  });
  document.addEventListener("click", (event) => {
    const again = event.target.closest && event.target.closest("[data-action='section-retry']");
    if (!again) return;
    const placeholder = again.closest(SECTION);
    const status = placeholder.querySelector("[data-testid='section-status']");
    status.textContent = "Loading…";
    placeholder.setAttribute("aria-busy", "true");
    delete placeholder.dataset.failed;
    window.htmx.trigger(placeholder, "retry");
  });
})();
