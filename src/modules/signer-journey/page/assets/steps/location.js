// The location check: the device's position (geolocation) or, when the sender chose so, the connection's.

import { ApiError, postJson } from '../api.js';
import { actionError, announce, busy, h } from '../dom.js';
import { report } from './feedback.js';

function formatDistance(metres) {
  if (!Number.isFinite(metres)) return '';
  return metres >= 1000 ? `${(metres / 1000).toFixed(metres >= 10_000 ? 0 : 1)} km` : `${Math.round(metres)} m`;
}

const GEO_HELP = {
  1: 'Your browser blocked access to your location. To allow it, open the site settings (the icon next to the address bar), set Location to “Allow”, then choose “Try again”. On a phone, location services must also be turned on in the phone’s settings.',
  2: 'Your device could not find its location. Turn on location services (and Wi-Fi if you can), then try again.',
  3: 'Finding your location took too long. Try again, ideally with Wi-Fi on or near a window.',
};

function currentPosition() {
  return new Promise((resolve, reject) =>
    navigator.geolocation.getCurrentPosition(resolve, reject, { enableHighAccuracy: true, timeout: 20_000, maximumAge: 0 }),
  );
}

export function locationStep(ctx, check) {
  const fromDevice = check.source !== 'ip';
  const heading = ctx.heading('Confirm your location');
  const intro = h(
    'p',
    {},
    fromDevice
      ? 'The sender asks to record where you sign. When your browser asks, allow it to share your location.'
      : 'The sender asks to record where you sign. Your approximate location is taken from your internet connection.',
  );
  const fence = check.geofence
    ? h('p', {}, `You need to be within ${formatDistance(check.geofence.radius)} of the place the sender chose.`)
    : null;
  const share = h(
    'button',
    { type: 'button', class: 'button button--primary' },
    fromDevice ? 'Share my location' : 'Confirm my location',
  );
  const help = h('p', { class: 'help', hidden: true });
  const error = actionError();

  share.addEventListener('click', () =>
    busy(share, fromDevice ? 'Finding your location…' : 'Confirming…', async () => {
      error.clear();
      help.hidden = true;
      let body = {};
      if (fromDevice) {
        if (!window.isSecureContext || !('geolocation' in navigator)) {
          report(new ApiError(400, 'This browser cannot share its location on this page. Try another browser.'), error, share);
          return;
        }
        try {
          const { coords } = await currentPosition();
          body = { latitude: coords.latitude, longitude: coords.longitude, accuracy: coords.accuracy };
        } catch (geoError) {
          help.textContent = GEO_HELP[geoError.code] ?? GEO_HELP[2];
          help.hidden = false;
          share.textContent = 'Try again';
          announce(help.textContent, { assertive: true });
          return;
        }
      }
      try {
        await postJson('/location', body);
        announce('Location confirmed.');
        await ctx.refresh();
      } catch (failure) {
        if (!ctx.failed(failure)) report(failure, error, share);
      }
    }),
  );

  return h('div', { class: 'step', dataset: { step: 'location' } }, heading, intro, fence, share, help, error.el);
}
