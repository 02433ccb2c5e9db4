// The location check: the device's position (geolocation) or, when the sender chose so, the connection's.

import { ApiError, postJson } from '../api.js';
import { actionError, announce, busy, h } from '../dom.js';
import { t } from '../i18n.js';
import { report } from './feedback.js';

/** A distance in the page's language: metres below a kilometre, else kilometres (whole ones from 10 km). */
function formatDistance(metres) {
  if (!Number.isFinite(metres)) return '';
  return metres >= 1000
    ? t('location.distance_km', { km: (metres / 1000).toFixed(metres >= 10_000 ? 0 : 1) })
    : t('location.distance_m', { metres: String(Math.round(metres)) });
}

/** What to do when the browser gives no position, by the GeolocationPositionError code (1, 2, 3). */
const GEO_HELP = { 1: 'location.help_denied', 2: 'location.help_unavailable', 3: 'location.help_timeout' };

function currentPosition() {
  return new Promise((resolve, reject) =>
    navigator.geolocation.getCurrentPosition(resolve, reject, { enableHighAccuracy: true, timeout: 20_000, maximumAge: 0 }),
  );
}

export function locationStep(ctx, check) {
  const fromDevice = check.source !== 'ip';
  const heading = ctx.heading(t('location.heading'));
  const intro = h('p', {}, fromDevice ? t('location.intro_device') : t('location.intro_ip'));
  const fence = check.geofence ? h('p', {}, t('location.fence', { distance: formatDistance(check.geofence.radius) })) : null;
  const share = h(
    'button',
    { type: 'button', class: 'button button--primary' },
    fromDevice ? t('location.share') : t('location.confirm'),
  );
  const help = h('p', { class: 'help', hidden: true });
  const error = actionError();

  share.addEventListener('click', () =>
    busy(share, fromDevice ? t('location.finding') : t('location.confirming'), async () => {
      error.clear();
      help.hidden = true;
      let body = {};
      if (fromDevice) {
        if (!window.isSecureContext || !('geolocation' in navigator)) {
          report(new ApiError(400, t('location.unsupported')), error, share);
          return;
        }
        try {
          const { coords } = await currentPosition();
          body = { latitude: coords.latitude, longitude: coords.longitude, accuracy: coords.accuracy };
        } catch (geoError) {
          help.textContent = t(GEO_HELP[geoError.code] ?? GEO_HELP[2]);
          help.hidden = false;
          share.textContent = t('location.try_again');
          announce(help.textContent, { assertive: true });
          return;
        }
      }
      try {
        await postJson('/location', body);
        announce(t('location.confirmed'));
        await ctx.refresh();
      } catch (failure) {
        if (!ctx.failed(failure)) report(failure, error, share);
      }
    }),
  );

  return h('div', { class: 'step', dataset: { step: 'location' } }, heading, intro, fence, share, help, error.el);
}
