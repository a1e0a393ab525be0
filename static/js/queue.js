// The queue pages' keys, and the number keys of the transcript page. The annotator's workspace
// (templates/editor/queue.html) and the transcript page: number keys answer the question you
// are on (in a pairwise comparison, 1 / 2 / = pick an answer or a tie); in the workspace,
// Ctrl+Enter submits the item from any field, s skips; the transcript's own keys (j/k, e, v,
// g …) stay in editor.js, which the page loads first, and a key editor.js has taken
// (preventDefault) is not taken again here. The review page
// (templates/editor/queue_review.html): a approves, r rejects (the comment first), n goes on.
(function () {
  "use strict";

  // A radio button or a checkbox is not a text field: number keys and s still work there.
  const TEXT_FIELD = "textarea, select, [contenteditable=''], [contenteditable='true'], "
    + "input:not([type=radio]):not([type=checkbox]):not([type=button]):not([type=submit]):not([type=reset])";
  // Where number keys answer: the queue's workspace, and the transcript page (its questions
  // beside the messages and on them), which loads this file too.
  const ANSWERING = "#queue-workspace, [data-answering]";
  const QUESTION = ":is(#queue-workspace, [data-answering]) fieldset.question";
  const MESSAGE = ":is(#queue-workspace, [data-answering]) .message";

  const byId = (id) => document.getElementById(id);
  const inTextField = (el) => Boolean(el && el.closest && el.closest(TEXT_FIELD));
  const closest = (el, selector) => (el && el.closest ? el.closest(selector) : null);

  // A key right after a swap can reach a button htmx has not processed yet (see editor.js).
  function activate(element) {
    if (window.htmx) window.htmx.process(element);
    element.click();
  }

  // --- the question you are on -----------------------------------------------------------------
  function questions(within) {
    return Array.from((within || document).querySelectorAll(within ? "fieldset.question" : QUESTION));
  }
  const pickable = (q) => Boolean(q.querySelector("input[data-key]:not([data-key=''])"));
  const answered = (q) => Boolean(q.querySelector("input:checked"));

  // The focused question; else, when the focus is on a message (j/k), its first question
  // unanswered (or its first); else the first required question unanswered; else the first
  // unanswered. Only questions with options count: a number key has nothing to pick elsewhere.
  function questionYouAreOn() {
    const active = document.activeElement;
    const focused = closest(active, QUESTION);
    if (focused) return focused;
    const message = closest(active, MESSAGE);
    if (message) {
      const own = questions(message).filter(pickable);
      if (own.length) return own.find((q) => !answered(q)) || own[0];
    }
    const open = questions().filter((q) => pickable(q) && !answered(q));
    return open.find((q) => q.hasAttribute("data-required")) || open[0] || null;
  }

  // The visible "you are here" marker (and aria-current) on the question a number key answers.
  function markQuestion() {
    const current = questionYouAreOn();
    questions().forEach((q) => {
      const on = q === current;
      q.classList.toggle("current", on);
      if (on) q.setAttribute("aria-current", "true");
      else q.removeAttribute("aria-current");
      const marker = q.querySelector(":scope > legend .you-are-on");
      if (on && !marker) {
        const tag = document.createElement("span");
        tag.className = "you-are-on";
        tag.textContent = "you are here";
        q.querySelector(":scope > legend").append(" ", tag);
      } else if (!on && marker) {
        marker.remove();
      }
    });
  }

  function pickOption(key) {
    const question = questionYouAreOn();
    const input = question && question.querySelector(`input[data-key="${key}"]`);
    if (!input) return false;
    if (input.type === "checkbox") input.checked = !input.checked;
    else input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    // The focus stays on the question just answered (not on one of its inputs, where editor.js
    // would take j/k for typing): the next number key changes that answer, Tab goes on.
    question.tabIndex = -1;
    question.focus({ preventScroll: true });
    markQuestion();
    return true;
  }

  document.addEventListener("focusin", markQuestion);
  document.addEventListener("change", (event) => { if (closest(event.target, QUESTION)) markQuestion(); });

  // --- answers still on their way when the item is submitted --------------------------------
  // A free-text answer is saved half a second after the typing stops, and any answer takes a
  // request: a submit sent meanwhile would hand the item in without it. The submit waits.
  const unsent = new Set(); // text questions typed in since their last save was sent
  const sending = new Set(); // questions whose answer is on its way
  let waiting = []; // submits held back until then

  // Whether an answer is still to be sent or on its way (a question swapped out meanwhile,
  // with its message, no longer counts: its answer's end never reaches the document).
  function busy() {
    for (const question of [...unsent, ...sending]) {
      if (!question.isConnected) { unsent.delete(question); sending.delete(question); }
    }
    return unsent.size > 0 || sending.size > 0;
  }
  function release() {
    if (busy() || !waiting.length) return;
    const held = waiting;
    waiting = [];
    held.forEach((go) => go());
  }

  document.addEventListener("input", (event) => {
    const question = closest(event.target, QUESTION);
    if (question && event.target.matches("textarea")) unsent.add(question);
  });
  document.addEventListener("htmx:beforeRequest", (event) => {
    if (!event.detail.elt.matches || !event.detail.elt.matches(QUESTION)) return;
    unsent.delete(event.detail.elt);
    sending.add(event.detail.elt);
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    sending.delete(event.detail.elt);
    release();
  });
  document.addEventListener("htmx:afterSettle", release);
  document.addEventListener("htmx:confirm", (event) => {
    const form = closest(event.detail.elt, "#queue-workspace form[data-move='submit']");
    if (!form || !busy()) return;
    event.preventDefault();
    // A typed answer is sent now rather than when its delay runs out (flush-answer is one of
    // its triggers in editor/labels.html).
    unsent.forEach((question) => question.dispatchEvent(new Event("flush-answer")));
    let sent = false;
    const go = () => { if (!sent) { sent = true; event.detail.issueRequest(true); } };
    waiting.push(go);
    setTimeout(go, 5000); // an answer that never comes back does not hold the item forever
    release();
  });

  // --- the workspace: focus on the answer panel -------------------------------------------------
  // On load and after each item (a submit or a skip swaps the workspace), the focus goes to the
  // answer panel: Submit is the next Tab stop, and the number keys answer from there.
  // Without an item, the focus goes to the Start button (Enter takes the next item), or to
  // Check again once nothing is left.
  function focusPanel(always) {
    const panel = byId("answer-panel")
      || document.querySelector("#queue-workspace :is([data-action='start'], [data-action='check-again'])");
    if (!panel) return;
    const active = document.activeElement;
    const elsewhere = active && active !== document.body && active.isConnected && !panel.contains(active);
    if (elsewhere && !always) return;
    panel.focus({ preventScroll: true });
    markQuestion();
  }
  // A new item starts on its first message (j goes on from there, not from where the last
  // item was left: editor.js keeps the place across swaps) with the focus on the panel.
  function startItem() {
    const first = document.querySelector(MESSAGE);
    if (first) first.focus({ preventScroll: true });
    focusPanel(true);
  }
  document.addEventListener("htmx:afterSettle", (event) => {
    if (event.detail.target && event.detail.target.id === "queue-workspace") startItem();
  });

  // --- the review page ----------------------------------------------------------------------
  function reviewButton(action) {
    return document.querySelector(`#review-workspace [data-action='${action}']`);
  }

  function reviewKey(event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      // Ctrl+Enter in the comment box sends the rejection it explains.
      const comment = closest(event.target, "#review-workspace textarea[name=comment]");
      const reject = comment && reviewButton("reject");
      if (reject) { event.preventDefault(); activate(reject); }
      return true;
    }
    if (event.key === "Escape" && closest(event.target, "#review-workspace textarea[name=comment]")) {
      const decision = byId("review-decision");
      if (decision) { event.preventDefault(); decision.focus(); }
      return true;
    }
    if (inTextField(event.target) || event.ctrlKey || event.metaKey || event.altKey) return true;
    const action = { a: "approve", r: "reject", n: "next" }[event.key];
    if (!action) return true;
    const button = reviewButton(action);
    if (!button) return true;
    event.preventDefault();
    if (action === "reject") {
      const comment = document.querySelector("#review-workspace textarea[name=comment]");
      if (comment && !comment.value.trim()) { comment.focus(); return true; }
    }
    activate(button);
    return true;
  }

  // After a decision the next submission (or item) is swapped in: the focus goes to its
  // decision (htmx would have kept it in the comment box, which has the same id), unless the
  // decision was refused: then in the comment box, to write what it lacked.
  document.addEventListener("htmx:afterSettle", (event) => {
    if (!event.detail.target || event.detail.target.id !== "review-workspace") return;
    const refused = document.querySelector("#review-decision .form-error");
    const target = refused ? byId("review-comment") : byId("review-decision") || byId("review-workspace");
    if (target) target.focus({ preventScroll: true });
  });

  // --- the model's suggestions: accepted one after another (each answer is its own request,
  // and two at once would contend for the same answers) --------------------------------------
  const PENDING_SUGGESTION = "[data-suggestion] [data-action='accept-suggestion']";
  let acceptingSuggestions = false;
  function acceptNextSuggestion() {
    const next = document.querySelector(PENDING_SUGGESTION);
    if (!next) { acceptingSuggestions = false; return; }
    activate(next);
  }
  document.addEventListener("htmx:afterSettle", () => {
    if (acceptingSuggestions) acceptNextSuggestion();
  });
  document.addEventListener("htmx:responseError", () => { acceptingSuggestions = false; });

  // --- keys ---------------------------------------------------------------------------------
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented) return;
    if (byId("review-workspace") && reviewKey(event)) return;
    const inQueue = Boolean(byId("queue-workspace"));
    if (!inQueue && !document.querySelector(ANSWERING)) return;
    if (inQueue && event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      // editor.js saves a message being edited (and took the key); anywhere else, even in the
      // free-text answer, Ctrl+Enter submits the item.
      if (closest(event.target, "form.message.editing, #source-form")) return;
      const submit = document.querySelector("#queue-workspace [data-action='submit']");
      if (submit) { event.preventDefault(); activate(submit); }
      return;
    }
    if (inQueue && event.key === "Escape" && !inTextField(event.target)
        && (closest(event.target, QUESTION) || closest(event.target, MESSAGE))) {
      // Back to the answer panel: the number keys answer the first required question again.
      event.preventDefault();
      focusPanel(true);
      return;
    }
    if (inTextField(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    // "=" is a comparison's tie (templates/editor/alternatives.html): 1 and 2 its answers.
    if (/^[1-9]$/.test(event.key) || event.key === "=") {
      if (pickOption(event.key)) event.preventDefault();
      return;
    }
    // "y" accepts the model's suggestions shown (templates/editor/suggestion.html): each
    // becomes the person's own answer. Only when some wait: a span tag keyed "y" keeps it
    // otherwise.
    if (event.key === "y" && document.querySelector(PENDING_SUGGESTION)) {
      event.preventDefault();
      acceptingSuggestions = true;
      acceptNextSuggestion();
      return;
    }
    if (inQueue && event.key === "s") {
      const skip = document.querySelector("#queue-workspace [data-action='skip']");
      if (skip) { event.preventDefault(); activate(skip); }
    }
  });

  function start() {
    const active = document.activeElement;
    if (byId("queue-workspace") && (!active || active === document.body)) startItem();
    const decision = byId("review-decision");
    if (decision) decision.focus({ preventScroll: true });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
