// Reloads the parts of the page marked data-live every data-refresh seconds, in place: the
// filters keep what is being typed into them, and a failed reload leaves the page as it was.
(function () {
  'use strict';
  var seconds = Number(document.body.getAttribute('data-refresh'));
  if (!(seconds > 0)) {
    return;
  }

  function replaceLiveParts(html) {
    var fresh = new DOMParser().parseFromString(html, 'text/html');
    document.querySelectorAll('[data-live]').forEach(function (part) {
      var replacement = fresh.getElementById(part.id);
      if (replacement) {
        part.replaceWith(document.importNode(replacement, true));
      }
    });
  }

  function reload() {
    fetch(window.location.href, { credentials: 'same-origin', headers: { 'Accept': 'text/html' } })
      .then(function (response) {
        var type = response.headers.get('Content-Type') || '';
        return (response.ok && type.indexOf('text/html') === 0) ? response.text() : null;
      })
      .then(function (html) {
        if (html !== null) {
          replaceLiveParts(html);
        }
      })
      .catch(function () {
        // The application may be restarting: the next reload tries again.
      })
      .then(function () {
        window.setTimeout(reload, seconds * 1000);
      });
  }

  window.setTimeout(reload, seconds * 1000);
})();
