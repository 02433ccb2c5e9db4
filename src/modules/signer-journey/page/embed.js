/*
 * embed.js: mounts this service's signing page in an iframe on your site and relays what happens there
 * (docs/embedding.md). No dependencies. Your site's origin must be among the account's embed origins
 * (PUT /api/v1/account/embed-origins), or the browser refuses to show the page in a frame.
 *
 *   <script src="https://esign.example.com/embed.js"></script>
 *   <script>
 *     const signing = EsignEmbed.mount(document.getElementById('sign'), {
 *       url: inviteUrl,                       // the signer's invite_url
 *       hideHeader: true,                     // optional
 *       onEvent: (event, data) => console.log(event, data),
 *     });
 *     // later: signing.send('hide-header', false); signing.destroy();
 *   </script>
 *
 * Events (schema version 1): ready, step, signed, declined, completed, error. Each message the page posts is
 * {source: 'esign-estamp', version: 1, event, data}; this script checks the sender (the iframe, at the service's
 * origin) before it calls onEvent.
 */
(function () {
  'use strict';
  var VERSION = 1;

  function mount(container, options) {
    if (!container || !options || typeof options.url !== 'string') throw new Error('EsignEmbed.mount(container, {url, onEvent})');
    var url = new URL(options.url, window.location.href);
    var origin = url.origin;
    var frame = document.createElement('iframe');
    frame.src = url.href;
    frame.title = options.title || 'Sign the document';
    // The face check uses the camera, the location check the position; the page asks only when a check needs it.
    frame.allow = 'camera; geolocation; clipboard-write';
    frame.style.border = '0';
    frame.style.width = '100%';
    frame.style.height = options.height || '100%';
    var onEvent = typeof options.onEvent === 'function' ? options.onEvent : function () {};

    function send(command, value) {
      if (frame.contentWindow)
        frame.contentWindow.postMessage(
          { source: 'esign-estamp-host', version: VERSION, command: command, value: value },
          origin,
        );
    }
    function receive(event) {
      if (event.source !== frame.contentWindow || event.origin !== origin) return;
      var message = event.data;
      if (!message || message.source !== 'esign-estamp' || message.version !== VERSION) return;
      if (message.event === 'ready') {
        if (options.hideHeader) send('hide-header', true);
        if (options.language) send('set-language', options.language);
      }
      onEvent(message.event, message.data || {});
    }
    window.addEventListener('message', receive);
    container.appendChild(frame);
    return {
      iframe: frame,
      send: send,
      destroy: function () {
        window.removeEventListener('message', receive);
        frame.remove();
      },
    };
  }

  window.EsignEmbed = { version: VERSION, mount: mount };
})();
