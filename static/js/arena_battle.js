// The battle page, streamed: a message is posted with fetch (the battle comes back as
// JSON), then each side's answer arrives as server-sent events, piece by piece, with a stop
// button per side; the vote is posted with fetch and the names are shown. Without this
// script every form still posts and the page comes back with both whole answers.
(function () {
  "use strict";
  var root = document.getElementById("battle");
  if (!root || !window.fetch || !window.EventSource) return;
  var promptForm = document.getElementById("prompt-form");
  var promptText = document.getElementById("prompt-text");
  var promptSend = document.getElementById("prompt-send");
  var voteForm = document.getElementById("vote-form");
  var regenerateForm = document.getElementById("regenerate-form");
  var afterVote = document.getElementById("after-vote");
  var voteSaid = document.getElementById("vote-said");
  var newRound = document.getElementById("new-round");
  var errorBox = document.getElementById("battle-error");
  var stateNode = document.getElementById("battle-state");
  var state = stateNode ? JSON.parse(stateNode.textContent) : null;
  var sources = {};
  // The page's words, in its language (the template translates them): no English here.
  function word(name) { return root.getAttribute("data-text-" + name) || ""; }
  function voteLabel(vote) {
    var button = voteForm.querySelector("button[value='" + vote + "']");
    return button ? button.textContent : vote;
  }
  document.getElementById("shortcuts").hidden = false;

  function csrf() {
    var input = promptForm.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function showError(message) {
    errorBox.textContent = message || "";
    errorBox.hidden = !message;
  }

  function errorText(body) {
    if (body && body.errors) return body.errors.map(function (e) { return e.message; }).join(" ");
    return word("failed");
  }

  function request(url, options) {
    options = options || {};
    options.headers = Object.assign({ Accept: "application/json", "X-CSRFToken": csrf() }, options.headers || {});
    options.credentials = "same-origin";
    return fetch(url, options).then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok) throw new Error(errorText(body));
        return body;
      });
    });
  }

  function exchange(turn, side) {
    var answer = turn[side];
    var li = document.createElement("li");
    li.className = "exchange";
    li.dataset.number = turn.number;
    var you = document.createElement("p");
    you.className = "you";
    you.textContent = turn.prompt;
    var text = document.createElement("div");
    text.className = "answer status-" + answer.status;
    text.dataset.status = answer.status;
    text.textContent = answer.text;
    li.appendChild(you);
    li.appendChild(text);
    if (answer.status === "stopped") note(li, "note", word("stopped"));
    if (answer.error) note(li, "error", answer.error);
    return li;
  }

  function note(li, kind, message) {
    var p = document.createElement("p");
    p.className = kind;
    p.textContent = message;
    li.appendChild(p);
  }

  function render() {
    ["a", "b"].forEach(function (side) {
      var list = document.getElementById("turns-" + side);
      list.replaceChildren.apply(list, state.turns.map(function (turn) { return exchange(turn, side); }));
      var heading = document.querySelector("#side-" + side + " h2");
      if (state.reveal) {
        heading.textContent = word("model").replace("{side}", side.toUpperCase()) + ": ";
        var name = document.createElement("span");
        name.className = "reveal";
        name.textContent = state.reveal[side];
        heading.appendChild(name);
      }
    });
    promptForm.action = state.turn_url;
    voteForm.action = state.vote_url;
    voteForm.hidden = !state.can_vote;
    promptForm.hidden = !state.can_continue;
    regenerateForm.action = state.regenerate_url;
    regenerateForm.hidden = !state.can_regenerate;
    if (state.voted) {
      afterVote.hidden = false;
      voteSaid.textContent = word("voted").replace("{vote}", voteLabel(state.vote));
    }
    if (state.failed && !state.voted) {
      showError(word("unusable"));
      afterVote.hidden = false;
    }
  }

  function answerNode(number, side) {
    return document.querySelector("#turns-" + side + " li[data-number='" + number + "'] .answer");
  }

  function settle(number, side, end) {
    var turn = state.turns[number - 1];
    turn[side] = Object.assign({}, turn[side], end);
    delete sources[side];
    document.getElementById("stop-" + side).hidden = true;
    document.getElementById("side-" + side).setAttribute("aria-busy", "false");
    if (!sources.a && !sources.b) refresh();
    else render();
  }

  function refresh() {
    return request(state.url).then(function (view) {
      state = view;
      render();
    }).catch(function (error) { showError(error.message); });
  }

  function stream(number, side) {
    var answer = state.turns[number - 1][side];
    var source = new EventSource(answer.stream);
    sources[side] = source;
    answer.status = "streaming";
    answer.text = "";
    var node = answerNode(number, side);
    node.className = "answer status-streaming";
    node.textContent = "";
    var stop = document.getElementById("stop-" + side);
    stop.hidden = false;
    // Each side is a live region: read once its answer is whole, not piece by piece.
    document.getElementById("side-" + side).setAttribute("aria-busy", "true");
    stop.onclick = function () { halt(number, side); };
    source.addEventListener("piece", function (event) {
      // The text lives in the state: the other side ending redraws the page.
      var current = state.turns[number - 1][side];
      current.text += JSON.parse(event.data).text;
      var shown = answerNode(number, side);
      if (shown) shown.textContent = current.text;
    });
    source.addEventListener("end", function (event) {
      source.close();
      settle(number, side, JSON.parse(event.data));
    });
    source.onerror = function () {
      // The connection broke (no retry: the model is asked once); the server kept what
      // it received.
      source.close();
      if (sources[side] === source) settle(number, side, {});
    };
  }

  function halt(number, side) {
    var source = sources[side];
    if (!source) return;
    source.close();
    request(state.turns[number - 1][side].stop, { method: "POST" })
      .then(function (end) { settle(number, side, end); })
      .catch(function (error) { showError(error.message); settle(number, side, {}); });
  }

  function streamOpen() {
    var last = state.turns[state.turns.length - 1];
    if (!last) return;
    ["a", "b"].forEach(function (side) {
      if (last[side].status === "pending" || last[side].status === "streaming") stream(last.number, side);
    });
  }

  function ask(form, button, done) {
    button.disabled = true;
    showError("");
    request(form.action, { method: "POST", body: new FormData(form) })
      .then(function (view) {
        state = view;
        if (location.pathname !== view.url) history.replaceState(null, "", view.url);
        done();
        render();
        promptForm.hidden = true;
        regenerateForm.hidden = true;
        voteForm.hidden = true;
        streamOpen();
      })
      .catch(function (error) { showError(error.message); })
      .finally(function () { button.disabled = false; });
  }

  promptForm.addEventListener("submit", function (event) {
    event.preventDefault();
    if (!promptText.value.trim()) return;
    ask(promptForm, promptSend, function () { promptText.value = ""; });
  });

  regenerateForm.addEventListener("submit", function (event) {
    event.preventDefault();
    ask(regenerateForm, document.getElementById("regenerate"), function () {});
  });

  voteForm.addEventListener("submit", function (event) {
    event.preventDefault();
    var choice = event.submitter ? event.submitter.value : "";
    var data = new FormData(voteForm);
    data.set("vote", choice);
    request(voteForm.action, { method: "POST", body: data })
      .then(function (view) { state = view; showError(""); render(); })
      .catch(function (error) { showError(error.message); });
  });

  document.addEventListener("keydown", function (event) {
    if (event.target === promptText) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        promptForm.requestSubmit();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || /input|textarea|select/i.test(event.target.tagName)) return;
    if (event.key === "Escape" && state) {
      var number = state.turns.length;
      Object.keys(sources).forEach(function (side) { halt(number, side); });
    } else if (!voteForm.hidden && "1234".indexOf(event.key) >= 0) {
      voteForm.querySelector("button[data-key='" + event.key + "']").click();
    } else if ((event.key === "r" || event.key === "R") && !regenerateForm.hidden) {
      regenerateForm.requestSubmit();
    } else if ((event.key === "n" || event.key === "N") && !afterVote.hidden) {
      newRound.click();
    }
  });

  if (state) {
    render();
    streamOpen();
  }
})();
