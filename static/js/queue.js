// The queue page's keys (templates/editor/queue.html): answering the label questions, submitting
// and skipping the item. The transcript's own keys (j/k, e, v, g …) stay in editor.js, which
// this page loads first; a key editor.js has taken (preventDefault) is not taken again here.
(function () {
  "use strict";

  const TYPING = "input, textarea, select, [contenteditable=''], [contenteditable='true']";
  const isTyping = (el) => el && el.closest && el.closest(TYPING);

  // A key right after a swap can reach a button htmx has not processed yet (see editor.js).
  function activate(element) {
    if (window.htmx) window.htmx.process(element);
    element.click();
  }

  function workspaceButton(action) {
    return document.querySelector(`#queue-workspace [data-action='${action}']`);
  }

  // Number keys pick the option with that key in the question the focus is in, else in the
  // first question still unanswered.
  function currentQuestion() {
    const focused = document.activeElement && document.activeElement.closest
      ? document.activeElement.closest("fieldset.question") : null;
    if (focused) return focused;
    const all = Array.from(document.querySelectorAll("fieldset.question"));
    return all.find((q) => !q.querySelector("input:checked") && !q.querySelector("textarea")) || null;
  }

  function pickOption(key) {
    const question = currentQuestion();
    const input = question && question.querySelector(`input[data-key="${key}"]`);
    if (!input) return false;
    if (input.type === "checkbox") input.checked = !input.checked;
    else input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    document.querySelectorAll("fieldset.question.current").forEach((q) => q.classList.remove("current"));
    question.classList.add("current");
    return true;
  }

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || isTyping(event.target)) return;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      const submit = workspaceButton("submit");
      if (submit) { event.preventDefault(); activate(submit); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (/^[1-9]$/.test(event.key) && pickOption(event.key)) {
      event.preventDefault();
      return;
    }
    if (event.key === "s") {
      const skip = workspaceButton("skip");
      if (skip) { event.preventDefault(); activate(skip); }
    }
  });
})();
