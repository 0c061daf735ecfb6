// The chat page without reloads: a message is sent with fetch to the JSON twin of its form
// and shown at once; the bot's reply then streams in over server-sent events (the "piece"
// events, then "end" with the conversation's state), the send button disabled until it
// ends. Without this script every form still posts, waits for the whole reply and the
// page comes back (one post per turn).
(function () {
  "use strict";
  var chat = document.getElementById("chat");
  if (!chat || !window.fetch || !window.EventSource) return;
  var sendForm = document.getElementById("chat-send");
  var retryForm = document.getElementById("chat-retry");
  var endForm = document.getElementById("chat-end");
  var list = document.getElementById("chat-turns");
  var typing = document.getElementById("chat-typing");
  var errorBox = document.getElementById("chat-error");
  var errorText = document.getElementById("chat-error-text");
  var count = document.getElementById("chat-count");
  var button = document.getElementById("chat-send-button");
  var text = document.getElementById("chat-text");
  var flagTemplate = document.getElementById("chat-flag-template");
  // The page's words, translated on the server (templates/annotation/chat.html).
  function say(name) { return chat.getAttribute("data-text-" + name); }

  function turnItem(turn) {
    var li = document.createElement("li");
    li.className = "chat-turn " + (turn.bot ? "bot" : "you");
    li.dataset.position = turn.position;
    var who = document.createElement("span");
    who.className = "who";
    who.textContent = say(turn.bot ? "chatbot" : "you");
    var body = document.createElement("span");
    body.className = "text";
    body.textContent = turn.text;
    li.appendChild(who);
    li.appendChild(body);
    if (turn.bot && flagTemplate) {
      var form = flagTemplate.content.firstElementChild.cloneNode(true);
      form.querySelector('input[name="position"]').value = turn.position;
      form.querySelector('input[name="offensive"]').value = turn.offensive ? "0" : "1";
      form.querySelector("button").textContent = say(turn.offensive ? "unflag" : "flag");
      li.appendChild(form);
    }
    return li;
  }

  function draw(state) {
    if (state.status !== "open") {
      window.location.reload();  // the conversation is over: the rating form comes next
      return;
    }
    list.textContent = "";
    state.turns.forEach(function (turn) { list.appendChild(turnItem(turn)); });
    sendForm.querySelector('input[name="position"]').value = state.next_position;
    count.textContent = say("count").replace("{sent}", state.worker_turns)
      .replace("{most}", state.max_turns).replace("{least}", state.min_turns);
    // While a reply is coming (due: this page asks for it now), only the stream acts.
    typing.hidden = !state.waiting;
    sendForm.hidden = !state.can_send;
    endForm.hidden = !state.can_end || state.waiting;
    retryForm.hidden = !state.can_retry || state.waiting;
    showError(state.error);
  }

  // The bot's reply as it is written; `done` runs once the stream has ended.
  function stream(done) {
    var reply = null;
    var source = new EventSource(chat.dataset.streamUrl);
    waiting(true);
    showError("");
    retryForm.hidden = true;
    endForm.hidden = true;
    source.addEventListener("piece", function (event) {
      if (!reply) {
        reply = turnItem({ position: list.children.length, bot: true, who: say("chatbot"), text: "" });
        reply.classList.add("is-streaming");
        list.appendChild(reply);
        typing.hidden = true;
      }
      reply.querySelector(".text").textContent += JSON.parse(event.data).text;
    });
    source.addEventListener("end", function (event) {
      source.close();
      var end = JSON.parse(event.data);
      waiting(false);
      if (end.state) draw(end.state);
      if (done) done();
    });
    source.onerror = function () {
      // The stream broke before its end (the server went away): the page as stored says
      // what became of the reply.
      source.close();
      waiting(false);
      showError(say("broken"));
      if (done) done();
    };
  }

  function showError(message) {
    errorBox.hidden = !message;
    errorText.textContent = message || "";
  }

  function post(url, form) {
    return fetch(url, {
      method: "POST",
      body: new FormData(form),
      credentials: "same-origin",
      headers: { "Accept": "application/json" }
    }).then(function (response) {
      return response.json().then(function (data) {
        if (!response.ok) {
          if (data.state) draw(data.state);
          // A refusal has the API's one error shape: {"errors": [{"message"}], "error_count"}.
          var refusal = data.errors && data.errors.length ? data.errors[0].message : "";
          showError(refusal || say("wrong"));
          return null;
        }
        draw(data);
        return data;
      });
    });
  }

  function waiting(on) {
    button.disabled = on;
    typing.hidden = !on;
    chat.classList.toggle("is-waiting", on);
    // The turns are a live region: a screen reader reads the reply once, when it is whole,
    // instead of every piece as it arrives.
    list.setAttribute("aria-busy", on ? "true" : "false");
  }

  function afterReply() {
    if (!sendForm.hidden) text.focus();
  }

  sendForm.addEventListener("submit", function (event) {
    event.preventDefault();
    if (button.disabled || !text.value.trim()) return;
    var sent = text.value.trim();
    var position = Number(sendForm.querySelector('input[name="position"]').value);
    list.appendChild(turnItem({ position: position, bot: false, who: say("you"), text: sent }));
    showError("");
    waiting(true);
    post(chat.dataset.sendUrl, sendForm).then(function (state) {
      if (!state) return waiting(false);
      text.value = "";
      if (state.waiting) stream(afterReply);
      else waiting(false);
    }).catch(function () {
      waiting(false);
      showError(say("resend"));
    });
  });

  text.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      sendForm.requestSubmit ? sendForm.requestSubmit() : sendForm.dispatchEvent(new Event("submit"));
    }
  });

  retryForm.addEventListener("submit", function (event) {
    event.preventDefault();
    showError("");
    retryForm.hidden = true;
    waiting(true);
    post(chat.dataset.retryUrl, retryForm).then(function (state) {
      if (state && state.waiting) stream(afterReply);
      else waiting(false);
    }).catch(function () {
      waiting(false);
      showError(say("failed"));
    });
  });

  // A reply due or streaming when the page was drawn (a reload, a second tab): ask for it.
  if (chat.dataset.waiting) stream(afterReply);
})();
