// The transcript editor's behaviour in the browser: keyboard shortcuts, the current version
// on every write, focus and highlighting of messages, call/reply pairs, and the raw-source
// editor's line numbers and the overlay of its highlighted text (highlighted by the server:
// this file has no token rules). No inline script anywhere: the queue page's own keys (answers,
// submit, skip) are in queue.js, loaded after this file.
(function () {
  "use strict";

  const TYPING = "input, textarea, select, [contenteditable=''], [contenteditable='true']";
  const MESSAGE = "#message-list .message";
  const PAGE_SIZE = 50; // turns a page (editor/presentation/transcript_view.py)

  const byId = (id) => document.getElementById(id);
  const isTyping = (el) => el && el.closest && el.closest(TYPING);

  // --- the version every write is made from ---------------------------------------------------
  // One place holds the version the page shows (#transcript-version, kept current by
  // out-of-band swaps): a form opened before the user's own last save must not conflict with it.
  document.addEventListener("htmx:configRequest", (event) => {
    const version = byId("transcript-version");
    const params = event.detail.parameters;
    if (!version || event.detail.verb === "get" || !params) return;
    const source = event.detail.elt;
    if (source && source.closest("[data-conflict]")) return; // the conflict form names theirs
    if (params instanceof FormData) {
      if (params.has("version")) params.set("version", version.value);
    } else if ("version" in params) {
      params.version = version.value;
    }
  });

  // --- messages: current one, focus, highlight ----------------------------------------------
  function messages() {
    return Array.from(document.querySelectorAll(MESSAGE));
  }

  // The index of the message the user is on: kept across swaps (a save, a cancel, a fix
  // replace its element), so that the next j/k goes on from there.
  let currentIndex = null;

  function indexOf(el) {
    const match = /^message-(\d+)$/.exec(el.id || "");
    return match ? Number(match[1]) : null;
  }

  function setCurrent(el, scroll) {
    if (!el) return;
    document.querySelectorAll(".message.current").forEach((m) => {
      m.classList.remove("current");
      m.removeAttribute("aria-current");
    });
    el.classList.add("current");
    el.setAttribute("aria-current", "true");
    if (indexOf(el) !== null) currentIndex = indexOf(el);
    if (scroll) {
      el.scrollIntoView({ block: "center", behavior: "auto" });
      if (el.tabIndex >= -1 && !isTyping(document.activeElement)) el.focus({ preventScroll: true });
    }
  }

  function flash(el) {
    if (!el) return;
    el.classList.remove("flash-highlight");
    void el.offsetWidth; // restart the animation
    el.classList.add("flash-highlight");
  }

  function goToMessage(index) {
    const el = byId("message-" + index);
    if (!el) return false;
    setCurrent(el, true);
    flash(el);
    return true;
  }

  document.body.addEventListener("ocm:focus-message", (event) => {
    goToMessage(event.detail.index);
  });

  // Message ``index``, or the first one shown after it (a rendering may leave some out); when
  // it is outside the pages the list holds, the window of pages around it is fetched first.
  function goToIndex(index) {
    const section = byId("transcript-messages");
    const list = byId("message-list");
    if (!section || !list) return;
    const el = byId("message-" + index);
    if (el) {
      setCurrent(el, true);
      flash(el);
      return;
    }
    const url = list.dataset.pageUrl + "&goto=" + index;
    if (!window.htmx) {
      window.location.assign(url);
      return;
    }
    window.htmx.ajax("GET", url, { target: "#transcript-messages", swap: "outerHTML" }).then(() => {
      landOn(index);
      if (new URL(url, window.location.href).pathname === window.location.pathname) {
        window.history.replaceState(null, "", url);
      }
    });
  }

  // After a page load asked for message ``index`` (``?goto=``): it, or the first one shown
  // after it, or the last one shown.
  function landOn(index) {
    const list = messages().filter((m) => indexOf(m) !== null);
    const el = list.find((m) => indexOf(m) >= index) || list[list.length - 1];
    if (el) { setCurrent(el, true); flash(el); }
  }

  // The go-to box: a message already on the page is scrolled to, without a reload.
  document.addEventListener("submit", (event) => {
    const form = event.target.closest && event.target.closest("form.goto");
    if (!form) return;
    const value = Number(form.elements.goto.value);
    if (!Number.isInteger(value)) return;
    event.preventDefault();
    // The message gets the focus (j and k go on from it), not the box: htmx would give it
    // back to the box after the swap, which has the same id.
    form.elements.goto.blur();
    goToIndex(Math.max(0, value));
  });

  // A swap that replaced the current message (saved, cancelled, fixed) leaves the user on it.
  document.addEventListener("htmx:afterSettle", () => {
    if (currentIndex === null || document.querySelector(".message.current")) return;
    const el = byId("message-" + currentIndex);
    if (!el) return;
    const lost = !document.activeElement || document.activeElement === document.body;
    setCurrent(el, false);
    if (lost) el.focus({ preventScroll: true });
  });

  // Diagnostics and pair links: scroll to a message already on the page; otherwise follow
  // the link, which loads the page through that message.
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-goto], a[data-pair]");
    if (link) {
      const index = link.dataset.goto !== undefined ? link.dataset.goto : link.dataset.pair;
      event.preventDefault();
      goToIndex(Number(index));
      return;
    }
    const remover = event.target.closest("[data-remove]");
    if (remover) {
      const target = byId(remover.dataset.remove);
      if (target) target.remove();
      return;
    }
    const lineLink = event.target.closest("a.diagnostic-link[data-line]");
    if (lineLink && byId("source-text")) {
      event.preventDefault();
      goToLine(Number(lineLink.dataset.line), Number(lineLink.dataset.column || 1));
    }
  });

  // Hovering or focusing a call or a reply highlights its partner.
  function partners(el) {
    const ids = [];
    if (el.dataset.answers) ids.push(el.dataset.answers);
    if (el.dataset.replies) ids.push(...el.dataset.replies.split(" "));
    return ids.map((i) => byId("message-" + i)).filter(Boolean);
  }
  function pairHighlight(event, on) {
    const el = event.target.closest && event.target.closest(".message[data-answers], .message[data-replies]");
    if (!el) return;
    [el, ...partners(el)].forEach((m) => m.classList.toggle("paired", on));
  }
  document.addEventListener("mouseover", (e) => pairHighlight(e, true));
  document.addEventListener("mouseout", (e) => pairHighlight(e, false));
  document.addEventListener("focusin", (e) => pairHighlight(e, true));
  document.addEventListener("focusout", (e) => pairHighlight(e, false));

  // The message that has the focus is the current one (j/k continue from it).
  document.addEventListener("focusin", (event) => {
    const message = event.target.closest && event.target.closest(MESSAGE);
    if (message) setCurrent(message, false);
  });

  // An answer to an element that is gone (a live validation that returns after its form was
  // saved or cancelled) has nothing left to update.
  document.addEventListener("htmx:beforeSwap", (event) => {
    if (event.detail.elt && !event.detail.elt.isConnected) event.detail.shouldSwap = false;
  });

  // A form swapped in gets the focus in its content field (caret at the end).
  document.addEventListener("htmx:afterSwap", (event) => {
    const field = event.detail.target && event.detail.target.querySelector
      ? (event.detail.target.matches("[data-autofocus]") ? event.detail.target : event.detail.target.querySelector("[data-autofocus]"))
      : null;
    const form = document.querySelector("form.message.editing [data-autofocus]");
    const target = field || form;
    if (target && !isTyping(document.activeElement)) {
      target.focus();
      target.setSelectionRange(target.value.length, target.value.length);
    }
  });

  // --- the window of pages -------------------------------------------------------------------
  // A long transcript is never in the page whole: the list holds at most MAX_PAGES pages of
  // messages. As a page comes in at one end (a loader scrolled into view), the pages farthest
  // from it leave at the other end and a loader takes their place; the browser's scroll
  // anchoring keeps what the user is looking at where it is. A page holding an open form or
  // the focus never leaves; the current message may (j and k fetch its window back).
  const MAX_PAGES = 5;

  function loaderFor(page, before) {
    const list = byId("message-list");
    const loader = document.createElement("div");
    loader.className = "loader " + (before ? "loader-before" : "loader-after");
    loader.setAttribute("hx-get", list.dataset.pageUrl + "&page=" + page + (before ? "&before=1" : ""));
    loader.setAttribute("hx-trigger", "revealed");
    loader.setAttribute("hx-swap", "outerHTML");
    loader.dataset[before ? "previousPage" : "nextPage"] = String(page);
    const link = document.createElement("a");
    link.href = list.dataset.pageUrl + "&goto=" + page * PAGE_SIZE;
    link.textContent = before ? "Earlier messages…" : "Later messages…";
    loader.appendChild(link);
    return loader;
  }

  function holdsTheUser(page) {
    return page.querySelector("form.message, :focus") !== null;
  }

  // The list is no scroll anchor for the browser (static/css/app.css): at the top of the
  // document Chromium anchors nothing, and a page coming in above would push the view up to
  // the next loader, which would load the next page, and so on to the first. So the pages
  // that come or go above the view keep what is on screen in place here.
  function keepInPlace(element, change) {
    const top = element.getBoundingClientRect().top;
    change();
    if (element.isConnected) window.scrollBy(0, element.getBoundingClientRect().top - top);
  }

  function trimWindow(grewAtEnd) {
    const list = byId("message-list");
    if (!list) return;
    const pages = Array.from(list.querySelectorAll(":scope > .message-page"));
    const excess = pages.length - MAX_PAGES;
    if (excess <= 0) return;
    const candidates = grewAtEnd ? pages.slice(0, excess) : pages.slice(-excess).reverse();
    let removed = null;
    keepInPlace(pages[grewAtEnd ? excess : 0], () => {
      for (const page of candidates) {
        if (holdsTheUser(page)) break;
        page.remove();
        removed = Number(page.dataset.page);
      }
    });
    if (removed === null) return;
    const edge = list.querySelector(grewAtEnd ? ":scope > .loader-before" : ":scope > .loader-after");
    if (edge) edge.remove();
    const loader = grewAtEnd ? loaderFor(removed, true) : loaderFor(removed, false);
    if (grewAtEnd) list.prepend(loader);
    else list.append(loader);
    if (window.htmx) window.htmx.process(loader);
  }

  let pageBelow = null; // what a page loaded above the view is put before, and where it was
  document.addEventListener("htmx:beforeSwap", (event) => {
    const loader = event.detail.elt;
    if (!loader || !loader.classList || !loader.classList.contains("loader-before")) return;
    const below = loader.nextElementSibling;
    pageBelow = below ? { element: below, top: below.getBoundingClientRect().top } : null;
  });

  document.addEventListener("htmx:afterSwap", (event) => {
    const loader = event.detail.elt;
    if (!loader || !loader.classList || !loader.classList.contains("loader")) return;
    if (pageBelow && pageBelow.element.isConnected) {
      window.scrollBy(0, pageBelow.element.getBoundingClientRect().top - pageBelow.top);
    }
    pageBelow = null;
    trimWindow(loader.classList.contains("loader-after"));
  });

  // --- a message's More menu and moves by drag and drop -----------------------------------------
  function closeMenu(menu, refocus) {
    menu.open = false;
    if (refocus) menu.querySelector("summary").focus();
  }

  function openCurrentMenu() {
    const current = document.querySelector(".message.current") || messages()[0];
    const menu = current && current.querySelector("details.message-menu");
    if (!menu) return;
    menu.open = true;
    const first = menu.querySelector(".menu-items a, .menu-items button");
    if (first) first.focus();
  }

  // One menu open at a time; a click elsewhere closes it.
  document.addEventListener("toggle", (event) => {
    const menu = event.target;
    if (!menu.matches || !menu.matches("details.message-menu") || !menu.open) return;
    document.querySelectorAll("details.message-menu[open]").forEach((other) => {
      if (other !== menu) other.open = false;
    });
  }, true);
  document.addEventListener("click", (event) => {
    document.querySelectorAll("details.message-menu[open]").forEach((menu) => {
      if (!menu.contains(event.target)) menu.open = false;
    });
  });

  // A message dragged by its handle onto another goes before or after it (by which half it
  // was dropped on): one move, one revision, through the same form as "Move to #".
  let dragged = null;
  const DROP_CLASSES = ["drop-before", "drop-after"];

  function dropSide(message, event) {
    const box = message.getBoundingClientRect();
    return event.clientY < box.top + box.height / 2 ? "drop-before" : "drop-after";
  }

  document.addEventListener("dragstart", (event) => {
    const handle = event.target.closest && event.target.closest("[data-drag]");
    if (!handle) return;
    dragged = Number(handle.dataset.drag);
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", "#" + dragged);
    const message = handle.closest(".message");
    if (message) message.classList.add("dragging");
  });
  document.addEventListener("dragover", (event) => {
    const target = dragged !== null && event.target.closest && event.target.closest(MESSAGE);
    if (!target) return;
    event.preventDefault();
    document.querySelectorAll(".drop-before, .drop-after").forEach((m) => m.classList.remove(...DROP_CLASSES));
    target.classList.add(dropSide(target, event));
  });
  document.addEventListener("dragend", () => {
    dragged = null;
    document.querySelectorAll(".dragging, .drop-before, .drop-after").forEach((m) => m.classList.remove("dragging", ...DROP_CLASSES));
  });
  document.addEventListener("drop", (event) => {
    const target = dragged !== null && event.target.closest && event.target.closest(MESSAGE);
    if (!target) return;
    event.preventDefault();
    const from = dragged;
    const onto = indexOf(target);
    const before = dropSide(target, event) === "drop-before";
    // The position it takes once it has left its own place.
    const to = from < onto ? (before ? onto - 1 : onto) : (before ? onto : onto + 1);
    const form = document.querySelector(`#message-${from} form[data-move-form]`);
    if (form && onto !== null && to !== from) {
      form.elements.to.value = String(to);
      if (window.htmx) window.htmx.process(form);
      form.requestSubmit();
    }
  });

  // --- keyboard -------------------------------------------------------------------------------
  let pendingG = false;

  function cycleRendering() {
    const tabs = Array.from(document.querySelectorAll("#transcript-messages .tabs a[data-audience]"));
    if (!tabs.length) return;
    const active = tabs.findIndex((t) => t.classList.contains("active"));
    tabs[(active + 1) % tabs.length].click();
  }

  function moveCurrent(step) {
    const list = messages();
    if (!list.length) return;
    const at = list.findIndex((m) => m.classList.contains("current"));
    if (at === -1 && currentIndex !== null) {
      goToIndex(Math.max(0, currentIndex + step)); // scrolled out of the window meanwhile
      return;
    }
    const next = at === -1 ? (step > 0 ? 0 : list.length - 1) : Math.min(list.length - 1, Math.max(0, at + step));
    setCurrent(list[next], true);
  }

  // A keyboard shortcut right after a swap can reach an element htmx has not processed yet:
  // its click would then follow the plain link (a full page, out of the queue). Processing
  // it first is a no-op when htmx already has.
  function activate(element) {
    if (window.htmx) window.htmx.process(element);
    element.click();
  }

  function editCurrent() {
    const focused = document.activeElement && document.activeElement.closest
      ? document.activeElement.closest(".message") : null;
    const current = focused || document.querySelector(".message.current") || messages()[0];
    const button = current && current.querySelector("[data-action='edit']");
    if (button) activate(button);
  }

  // Span tagging: select text in a message's body and press a tag's key. Offsets count the
  // characters of the body's text, which is the message's logical text as written.
  function offsetIn(container, node, offset) {
    const range = document.createRange();
    range.setStart(container, 0);
    range.setEnd(node, offset);
    return range.toString().length;
  }

  function tagSelection(key) {
    const selection = window.getSelection();
    if (!selection || selection.isCollapsed || !selection.rangeCount) return false;
    const range = selection.getRangeAt(0);
    const body = range.commonAncestorContainer.nodeType === Node.ELEMENT_NODE
      ? range.commonAncestorContainer.closest("[data-spannable].body")
      : range.commonAncestorContainer.parentElement.closest("[data-spannable].body");
    if (!body) return false;
    const article = body.closest(".message");
    const tag = article && article.querySelector(`.tag-key[data-tag-key="${key}"]`);
    if (!tag) return false;
    const start = offsetIn(body, range.startContainer, range.startOffset);
    const end = offsetIn(body, range.endContainer, range.endOffset);
    const transcript = document.getElementById("transcript-messages").dataset.transcript;
    htmx.ajax("POST", `/transcripts/${transcript}/spans/`, {
      target: "#" + article.id,
      swap: "outerHTML",
      values: {
        schema: tag.dataset.schema,
        question: tag.dataset.question,
        value: tag.dataset.tag,
        message_index: body.dataset.messageIndex,
        start: start,
        end: end,
      },
    });
    selection.removeAllRanges();
    return true;
  }

  function toggleShortcuts() {
    const dialog = byId("shortcuts");
    if (!dialog) return;
    if (dialog.open) dialog.close();
    else dialog.showModal();
  }

  document.addEventListener("keydown", (event) => {
    const form = event.target.closest && event.target.closest("form.message.editing, #source-form");
    if (form && event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      if (window.htmx) window.htmx.process(form); // a form swapped in a moment ago (see activate)
      form.requestSubmit(form.querySelector("[data-action='save']"));
      return;
    }
    if (form && event.key === "Escape" && form.matches(".message.editing")) {
      event.preventDefault();
      const cancel = form.querySelector("[data-action='cancel']");
      if (cancel) activate(cancel);
      return;
    }
    const menu = event.target.closest && event.target.closest("details.message-menu[open]");
    if (menu && event.key === "Escape") {
      event.preventDefault();
      closeMenu(menu, true);
      return;
    }
    if (isTyping(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (pendingG) {
      // The key after g belongs to the pair, even when it leads nowhere here (a queue's s is not
      // a skip after g: queue.js ignores keys already taken).
      pendingG = false;
      event.preventDefault();
      if (event.key === "g") { goToIndex(0); return; }
      const where = { h: "history", s: "raw" }[event.key];
      const link = where === "history"
        ? document.querySelector("[data-shortcut-target='history']")
        : where === "raw" ? document.querySelector("[data-action='raw']") : null;
      if (link) activate(link);
      return;
    }
    if (/^[a-z]$/.test(event.key) && tagSelection(event.key)) {
      event.preventDefault();
      return;
    }
    const actions = {
      j: () => moveCurrent(1),
      k: () => moveCurrent(-1),
      e: editCurrent,
      m: openCurrentMenu,
      v: cycleRendering,
      g: () => { pendingG = true; setTimeout(() => { pendingG = false; }, 1500); },
      G: () => {
        const section = byId("transcript-messages");
        if (section) goToIndex(Number(section.dataset.messageCount || 1) - 1);
      },
      "?": toggleShortcuts,
    };
    const action = actions[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  });

  // --- raw source: line numbers, the highlighted overlay, scroll sync --------------------------
  // The textarea's text is transparent: what shows is the overlay under it (#source-highlight),
  // the text as the server highlighted it. Each edit is copied into the overlay at once, as
  // plain text between the marks already there; the server's answer to the typing (the live
  // validation) then swaps in its highlighting of that text, unless the text changed since.

  // The text node and offset at character ``offset`` of ``root``'s text.
  function textPosition(root, offset) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (offset <= node.data.length) return [node, offset];
      offset -= node.data.length;
    }
    return [root, root.childNodes.length];
  }

  // Makes the overlay's text ``text`` by replacing only what differs (the span between the
  // common start and the common end), so the marks around an edit stay.
  function copyEdit(overlay, text) {
    const before = overlay.textContent;
    const after = text + "\n"; // the overlay ends with a line break, for a last empty line
    const shorter = Math.min(before.length, after.length);
    let start = 0;
    while (start < shorter && before[start] === after[start]) start++;
    let end = 0;
    const sameEnd = () => before[before.length - 1 - end] === after[after.length - 1 - end];
    while (end < shorter - start && sameEnd()) end++;
    if (start === before.length && start === after.length) return;
    const range = document.createRange();
    range.setStart(...textPosition(overlay, start));
    range.setEnd(...textPosition(overlay, before.length - end));
    range.deleteContents();
    const inserted = after.slice(start, after.length - end);
    if (inserted) range.insertNode(document.createTextNode(inserted));
  }

  // The server's highlighting is shown only if it is of the text as it is now: an answer to
  // an earlier keystroke would take back what was typed since (the next answer follows).
  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const textarea = byId("source-text");
    if (event.detail.target.id !== "source-highlight" || !textarea) return;
    if (event.detail.fragment.textContent !== textarea.value + "\n") event.detail.shouldSwap = false;
  });
  document.addEventListener("htmx:oobAfterSwap", (event) => {
    if (event.detail.target.id === "source-highlight") syncScroll();
  });

  function errorLines() {
    const panel = byId("diagnostics");
    const lines = panel && panel.dataset.errorLines ? panel.dataset.errorLines.split(" ") : [];
    return new Set(lines.filter(Boolean).map(Number));
  }

  function renderGutter(editor, count) {
    const gutter = editor.querySelector(".gutter");
    const errors = errorLines();
    const items = [];
    for (let line = 1; line <= count; line++) {
      items.push('<li id="L' + line + '"' + (errors.has(line) ? ' class="has-error"' : "") + ">" + line + "</li>");
    }
    gutter.innerHTML = items.join("");
  }

  function refreshSource() {
    const textarea = byId("source-text");
    if (!textarea) return;
    const editor = textarea.closest(".code-editor");
    copyEdit(byId("source-highlight"), textarea.value);
    renderGutter(editor, textarea.value.split("\n").length);
    syncScroll();
  }

  function syncScroll() {
    const textarea = byId("source-text");
    if (!textarea) return;
    const editor = textarea.closest(".code-editor");
    const pre = editor.querySelector(".code-highlight");
    pre.scrollTop = textarea.scrollTop;
    pre.scrollLeft = textarea.scrollLeft;
    editor.querySelector(".gutter").scrollTop = textarea.scrollTop;
  }

  function goToLine(line, column) {
    const textarea = byId("source-text");
    const lines = textarea.value.split("\n");
    let offset = 0;
    for (let i = 0; i < Math.min(line - 1, lines.length); i++) offset += lines[i].length + 1;
    offset += Math.max(0, column - 1);
    textarea.focus();
    textarea.setSelectionRange(offset, offset);
    const lineHeight = parseFloat(getComputedStyle(textarea).lineHeight) || 18;
    textarea.scrollTop = Math.max(0, (line - 5) * lineHeight);
    syncScroll();
    const gutterLine = byId("L" + line);
    flash(gutterLine);
  }

  document.addEventListener("input", (event) => {
    if (event.target.id === "source-text") refreshSource();
  });
  document.addEventListener("scroll", (event) => {
    if (event.target.id === "source-text") syncScroll();
  }, true);
  document.addEventListener("htmx:afterSettle", () => {
    const textarea = byId("source-text");
    if (textarea) renderGutter(textarea.closest(".code-editor"), textarea.value.split("\n").length);
  });

  function start() {
    document.documentElement.classList.add("js");
    if (byId("source-text")) {
      refreshSource();
      const hash = window.location.hash.match(/^#L(\d+)$/);
      if (hash) goToLine(Number(hash[1]), 1);
    }
    const hash = window.location.hash.match(/^#message-(\d+)$/);
    if (hash) goToMessage(hash[1]);
    const section = byId("transcript-messages");
    if (section && section.dataset.focus !== undefined) landOn(Number(section.dataset.focus));
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
