// Regenerate an assistant turn with a model (editor/assist/regenerate.py): the answer is
// streamed from POST /api/v1/transcripts/{id}/messages/{index}/regenerate?stream=true into a
// box under the message as it arrives (server-sent events read with fetch + ReadableStream),
// then kept as an alternative of the turn: Accept promotes it (one revision), Keep leaves it
// among the alternatives (a preference pair candidate), Discard deletes it.
// No inline script (CSP): the page carries what this needs in #regenerate-config.
(function () {
  "use strict";

  const config = document.getElementById("regenerate-config");
  if (!config) return;
  const api = config.dataset.api;
  const transcript = config.dataset.transcript;
  const csrf = config.querySelector("input[name=csrfmiddlewaretoken]").value;

  function send(method, path, body) {
    return fetch(api + path, {
      method: method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  function element(tag, attrs, text) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([name, value]) => node.setAttribute(name, value));
    if (text) node.textContent = text;
    return node;
  }

  function boxFor(index) {
    const message = document.getElementById("message-" + index);
    const old = document.querySelector('[data-regenerate-box="' + index + '"]');
    if (old) old.remove();
    const box = element("section", {
      class: "regenerate-box",
      "data-regenerate-box": index,
      "aria-label": "Regenerated answer for message #" + index,
      "aria-busy": "true",
    });
    const status = element("p", { class: "muted", "data-regenerate-status": "", role: "status" }, "Asking the model…");
    const reasoning = element("details", { class: "regenerate-reasoning", hidden: "" });
    reasoning.append(element("summary", {}, "Reasoning"), element("pre", { "data-regenerate-reasoning": "" }));
    const text = element("div", { class: "regenerate-text", "data-regenerate-text": "", "aria-live": "polite" });
    const calls = element("pre", { class: "regenerate-calls", "data-regenerate-calls": "", hidden: "" });
    const actions = element("div", { class: "regenerate-actions", hidden: "" });
    box.append(status, reasoning, text, calls, actions);
    message.after(box);
    return box;
  }

  // Server-sent events from a fetch body: "event: NAME\ndata: JSON\n\n" blocks.
  async function* events(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = "message";
        let data = "";
        block.split("\n").forEach((line) => {
          if (line.startsWith("event: ")) name = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        });
        yield { name: name, data: data ? JSON.parse(data) : null };
      }
    }
  }

  function showError(box, error) {
    box.setAttribute("aria-busy", "false");
    const status = box.querySelector("[data-regenerate-status]");
    status.className = "refusal";
    status.setAttribute("role", "alert");
    status.dataset.code = error.code || "";
    status.textContent = error.message || "The model could not answer.";
  }

  function offerChoices(box, alternative) {
    box.setAttribute("aria-busy", "false");
    box.dataset.alternative = alternative.id;
    box.querySelector("[data-regenerate-status]").textContent =
      "The model's answer (" + ((alternative.generation || {}).model || "model") + "), kept as an alternative of this turn:";
    const actions = box.querySelector(".regenerate-actions");
    const accept = element("button", { type: "button", class: "small primary", "data-action": "accept-regenerated" }, "Accept");
    const keep = element("button", { type: "button", class: "small", "data-action": "keep-regenerated" }, "Keep");
    const discard = element("button", { type: "button", class: "small danger", "data-action": "discard-regenerated" }, "Discard");
    actions.append(accept, keep, discard);
    actions.hidden = false;
    accept.focus();

    accept.addEventListener("click", async () => {
      const version = Number(document.getElementById("transcript-version").value);
      const response = await send("POST", "/transcripts/" + transcript + "/alternatives/" + alternative.id + "/promote", { version: version });
      if (response.ok) window.location.reload();
      else showError(box, await response.json());
    });
    keep.addEventListener("click", () => {
      actions.remove();
      box.dataset.kept = "true";
      box.querySelector("[data-regenerate-status]").textContent =
        "Kept as an alternative of this turn (see Alternatives; a candidate for preference pairs).";
    });
    discard.addEventListener("click", async () => {
      const response = await send("DELETE", "/transcripts/" + transcript + "/alternatives/" + alternative.id);
      if (response.ok) box.remove();
      else showError(box, await response.json());
    });
  }

  async function regenerate(form) {
    const index = form.dataset.messageIndex;
    const connection = Number(new FormData(form).get("connection_id"));
    const menu = form.closest("details");
    if (menu) menu.open = false;
    const box = boxFor(index);
    const text = box.querySelector("[data-regenerate-text]");
    const reasoning = box.querySelector("[data-regenerate-reasoning]");
    const calls = box.querySelector("[data-regenerate-calls]");
    const toolCalls = {};
    let response;
    try {
      response = await send("POST", "/transcripts/" + transcript + "/messages/" + index + "/regenerate?stream=true", { connection_id: connection });
    } catch (failure) {
      showError(box, { message: "The server could not be reached: " + failure });
      return;
    }
    if (!response.ok) {
      showError(box, await response.json().catch(() => ({ message: response.statusText })));
      return;
    }
    box.querySelector("[data-regenerate-status]").textContent = "The model is answering…";
    let ended = false;
    try {
      ended = await follow(response, text, reasoning, calls, toolCalls, box);
    } catch (failure) {
      ended = false;
    }
    if (!ended) showError(box, { message: "The answer stopped before it ended: nothing was kept. Try again." });
  }

  // Shows the stream's pieces as they come; true once it ended with the alternative or an error.
  async function follow(response, text, reasoning, calls, toolCalls, box) {
    for await (const event of events(response)) {
      if (event.name === "delta") {
        const delta = event.data;
        if (delta.content) text.textContent += delta.content;
        if (delta.reasoning) {
          reasoning.parentElement.hidden = false;
          reasoning.textContent += delta.reasoning;
        }
        if (delta.tool_call) {
          toolCalls[delta.tool_call.index] = delta.tool_call;
          calls.hidden = false;
          calls.textContent = Object.values(toolCalls)
            .map((call) => call.name + "(" + call.arguments + ")")
            .join("\n");
        }
      } else if (event.name === "done") {
        offerChoices(box, event.data.alternative);
        return true;
      } else if (event.name === "error") {
        showError(box, event.data);
        return true;
      }
    }
    return false;
  }

  // The items are hidden until this script shows them: on load, and in each part htmx swaps in.
  // (The script comes with every editor's transcript page: a later page of messages may bring them.)
  function showItems(root) {
    root.querySelectorAll("[data-regenerate-form][hidden]").forEach((form) => {
      form.hidden = false;
    });
  }
  showItems(document);
  document.body.addEventListener("htmx:afterSettle", (event) => showItems(event.target));

  document.addEventListener("submit", (event) => {
    const form = event.target.closest("[data-regenerate-form]");
    if (!form) return;
    event.preventDefault();
    regenerate(form);
  });
})();
