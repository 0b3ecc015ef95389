// The dashboard's only script (served from /static; the CSP forbids inline
// script). Without it every page still works as plain forms; with it:
// confirmations before destructive buttons, the live roster, live logs.
'use strict';
(function () {
  // A button with data-confirm asks first.
  document.addEventListener('submit', function (ev) {
    var button = ev.submitter;
    var question = button && button.getAttribute('data-confirm');
    if (question && !window.confirm(question)) {
      ev.preventDefault();
    }
  });

  function setLive(text, state) {
    var live = document.getElementById('live');
    if (live) {
      live.textContent = text;
      live.setAttribute('data-state', state);
    }
  }

  // The summary's counts, recomputed from the rows on the page.
  function recount() {
    var roster = document.getElementById('roster');
    if (!roster) {
      return;
    }
    var body = roster.tBodies[0];
    var counts = {
      'count-agents': body.rows.length,
      'count-running': body.querySelectorAll('span.state.ok').length,
      'count-waiting': body.querySelectorAll('span.tag.needs').length
    };
    Object.keys(counts).forEach(function (id) {
      var el = document.getElementById(id);
      if (el) {
        el.textContent = String(counts[id]);
      }
    });
  }

  // A destroyed agent's row leaves the page.
  function onRemoved(ev) {
    var old = document.getElementById('row-' + ev.data);
    if (old) {
      old.remove();
      recount();
    }
  }

  // After a lag: every current name; rows of any other agent leave.
  function onNames(ev) {
    var roster = document.getElementById('roster');
    if (!roster) {
      return;
    }
    var keep = {};
    ev.data.split(' ').forEach(function (name) { keep['row-' + name] = true; });
    Array.prototype.slice.call(roster.tBodies[0].rows).forEach(function (row) {
      if (!keep[row.id]) {
        row.remove();
      }
    });
    recount();
  }

  // Rows arrive rendered by the server's own template (escaped there);
  // a row replaces the one with its id, keeping its place in the tree.
  function onRow(ev) {
    var template = document.createElement('template');
    template.innerHTML = ev.data.trim();
    var row = template.content.firstElementChild;
    if (!row || !row.id) {
      return;
    }
    var old = document.getElementById(row.id);
    if (old) {
      row.className = old.className;
      old.replaceWith(row);
    } else {
      var roster = document.getElementById('roster');
      if (roster) {
        roster.tBodies[0].appendChild(row);
      }
    }
    recount();
  }

  if (document.getElementById('live') && window.EventSource) {
    var rows = new EventSource('/events/roster');
    rows.addEventListener('ready', function () { setLive('live', 'live'); });
    rows.addEventListener('row', onRow);
    rows.addEventListener('removed', onRemoved);
    rows.addEventListener('names', onNames);
    rows.addEventListener('error', function () { setLive('reconnecting…', 'lost'); });
  }

  var logs = document.getElementById('logs');
  if (logs && logs.getAttribute('data-follow') && window.EventSource) {
    var entries = new EventSource(logs.getAttribute('data-follow'));
    var append = function (text, cls) {
      var line = document.createElement('span');
      line.textContent = text + '\n';
      if (cls) {
        line.className = cls;
      }
      var atEnd = logs.scrollTop + logs.clientHeight >= logs.scrollHeight - 4;
      logs.appendChild(line);
      if (atEnd) {
        logs.scrollTop = logs.scrollHeight;
      }
    };
    entries.addEventListener('entry', function (ev) { append(ev.data); });
    entries.addEventListener('failed', function (ev) {
      append(ev.data, 'error');
      entries.close();
    });
  }
})();
