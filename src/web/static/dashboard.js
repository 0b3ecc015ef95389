// The dashboard's only script (served from /static; the CSP forbids inline
// script). Without it every page still works as plain forms; with it:
// confirmations before destructive buttons, the live roster, live logs,
// the agent page's live turn.
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

  // A live table: <table data-live="/events/..."> is fed rows by that
  // stream; with data-append it also takes new rows and drops gone ones
  // (the roster, the swarm), without it only replaces the rows it has (an
  // agent's page).
  var table = document.querySelector('table[data-live]');
  var appends = table && table.hasAttribute('data-append');

  // The summary's counts, recomputed from the rows on the page.
  function recount() {
    var body = table.tBodies[0];
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

  // An agent that left (destroyed, or gone from its hive) leaves the page.
  function onRemoved(ev) {
    var old = document.getElementById('row-' + ev.data);
    if (old && appends) {
      old.remove();
      recount();
    }
  }

  // After a lag: every current name; rows of any other agent leave.
  function onNames(ev) {
    if (!appends) {
      return;
    }
    var keep = {};
    ev.data.split(' ').forEach(function (name) { keep['row-' + name] = true; });
    Array.prototype.slice.call(table.tBodies[0].rows).forEach(function (row) {
      if (!keep[row.id]) {
        row.remove();
      }
    });
    recount();
  }

  // Rows arrive rendered by the server's own template (escaped there);
  // a row replaces the one with its id, keeping its place (and, in the
  // roster, its depth in the tree).
  function onRow(ev) {
    var template = document.createElement('template');
    template.innerHTML = ev.data.trim();
    var row = template.content.firstElementChild;
    if (!row || !row.id) {
      return;
    }
    var old = document.getElementById(row.id);
    if (old && appends && old.getAttribute('data-parent') !== row.getAttribute('data-parent')) {
      old.remove(); // moved in the tree: placed again below
      old = null;
    }
    if (old) {
      if (old.className) {
        row.className = old.className;
      }
      old.replaceWith(row);
    } else if (appends) {
      place(row);
    }
    recount();
  }

  function depthOf(row) {
    var m = /depth-(\d+)/.exec(row.className);
    return m ? parseInt(m[1], 10) : 0;
  }

  // A new row goes under its parent, after the parent's last descendant,
  // one level deeper; without a parent on the page, at the end.
  function place(row) {
    var body = table.tBodies[0];
    var name = row.getAttribute('data-parent');
    var parent = name ? document.getElementById('row-' + name) : null;
    if (!parent || parent.parentNode !== body) {
      body.appendChild(row);
      return;
    }
    var depth = depthOf(parent);
    if (/depth-/.test(row.className)) {
      row.className = row.className.replace(/depth-\d+/, 'depth-' + Math.min(depth + 1, 6));
    }
    var after = parent;
    while (after.nextElementSibling && depthOf(after.nextElementSibling) > depth) {
      after = after.nextElementSibling;
    }
    after.after(row);
  }

  if (table && window.EventSource) {
    var rows = new EventSource(table.getAttribute('data-live'));
    rows.addEventListener('ready', function () { setLive('live', 'live'); });
    rows.addEventListener('row', onRow);
    rows.addEventListener('removed', onRemoved);
    rows.addEventListener('names', onNames);
    rows.addEventListener('error', function () { setLive('reconnecting…', 'lost'); });
  }

  // A live list: <... data-live-list="/events/..."> gets its items again
  // after each change; items are matched by id, so one that stays keeps its
  // node (and whatever the operator is typing in it), new ones come in at
  // their place, gone ones leave.
  function syncList(list, html) {
    var template = document.createElement('template');
    template.innerHTML = html.trim();
    var fresh = Array.prototype.slice.call(template.content.children);
    var keep = {};
    fresh.forEach(function (item, i) {
      keep[item.id] = true;
      var here = list.children[i];
      if (here && here.id === item.id) {
        return;
      }
      var old = item.id ? document.getElementById(item.id) : null;
      list.insertBefore(old && old.parentNode === list ? old : item, here || null);
    });
    Array.prototype.slice.call(list.children).forEach(function (item) {
      if (!keep[item.id]) {
        item.remove();
      }
    });
  }

  var liveList = document.querySelector('[data-live-list]');
  if (liveList && window.EventSource) {
    var items = new EventSource(liveList.getAttribute('data-live-list'));
    items.addEventListener('ready', function () { setLive('live', 'live'); });
    items.addEventListener('list', function (ev) { syncList(liveList, ev.data); });
    items.addEventListener('error', function () { setLive('reconnecting…', 'lost'); });
  }

  // A live view: <... data-live-html="/events/..."> is rendered again by
  // the server (escaped there) after each change and swapped in whole (the
  // agent page's turn in progress and last turns).
  var liveHtml = document.querySelector('[data-live-html]');
  if (liveHtml && window.EventSource) {
    var views = new EventSource(liveHtml.getAttribute('data-live-html'));
    views.addEventListener('html', function (ev) {
      var template = document.createElement('template');
      template.innerHTML = ev.data;
      liveHtml.replaceChildren(template.content);
    });
    views.addEventListener('failed', function (ev) {
      var note = document.createElement('p');
      note.className = 'error';
      note.textContent = ev.data;
      liveHtml.replaceChildren(note);
      views.close();
    });
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
