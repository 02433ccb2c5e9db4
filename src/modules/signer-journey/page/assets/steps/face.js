// The face check: a photo from the camera or a chosen image, sent as a JPEG and compared by the server.

import { ApiError, attemptsLeftOf, attemptsLeftText, postBytes } from '../api.js';
import { actionError, announce, busy, clearFieldError, field, h } from '../dom.js';
import { t } from '../i18n.js';
import { report } from './feedback.js';

const MAX_PHOTO_SIDE = 1280;

/** A JPEG of at most MAX_PHOTO_SIDE pixels a side, from a video frame or a chosen image. */
async function jpegOf(source, width, height) {
  const scale = Math.min(1, MAX_PHOTO_SIDE / Math.max(width, height));
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(width * scale);
  canvas.height = Math.round(height * scale);
  canvas.getContext('2d').drawImage(source, 0, 0, canvas.width, canvas.height);
  return new Promise((resolve, reject) =>
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('no image'))), 'image/jpeg', 0.9),
  );
}

/** The step's elements; nothing is wired yet. */
function faceElements(ctx, check) {
  return {
    heading: ctx.heading(t('face.heading')),
    intro: h('p', {}, t('face.intro')),
    attempts: h(
      'p',
      { class: 'hint' },
      Number.isInteger(check.attempts_left) ? t('face.attempts_left', { count: check.attempts_left }) : '',
    ),
    video: h('video', {
      class: 'camera',
      autoplay: true,
      playsinline: true,
      muted: true,
      'aria-label': t('face.camera_preview'),
      hidden: true,
    }),
    preview: h('img', { class: 'photo-preview', alt: t('face.preview_alt'), hidden: true }),
    start: h('button', { type: 'button', class: 'button button--primary' }, t('face.start_camera')),
    capture: h('button', { type: 'button', class: 'button button--primary', hidden: true }, t('face.take_photo')),
    use: h('button', { type: 'button', class: 'button button--primary', hidden: true }, t('face.use_photo')),
    retake: h('button', { type: 'button', class: 'button button--secondary', hidden: true }, t('face.retake_photo')),
    picker: field({
      label: t('face.picker_label'),
      hint: t('face.picker_hint'),
      name: 'face-photo',
      attrs: { type: 'file', accept: 'image/jpeg,image/png', capture: 'user' },
    }),
    error: actionError(),
  };
}

/** The camera's stream and the photo about to be sent, with the preview that shows it. */
function photoState(ui) {
  const state = { stream: null, photo: null, previewUrl: null };
  state.stopCamera = () => {
    state.stream?.getTracks().forEach((track) => track.stop());
    state.stream = null;
    ui.video.srcObject = null;
    ui.video.hidden = true;
    ui.capture.hidden = true;
  };
  state.setPhoto = (blob) => {
    state.photo = blob;
    if (state.previewUrl) URL.revokeObjectURL(state.previewUrl);
    state.previewUrl = URL.createObjectURL(blob);
    ui.preview.src = state.previewUrl;
    ui.preview.hidden = false;
    ui.use.hidden = false;
    ui.retake.hidden = false;
    ui.use.focus();
  };
  return state;
}

/** "Start camera" and "Take photo". */
function wireCamera(ui, state) {
  const { video, start, capture, picker, error } = ui;
  start.addEventListener('click', async () => {
    error.clear();
    if (!navigator.mediaDevices?.getUserMedia) {
      report(new ApiError(400, t('face.no_camera')), error, picker.input);
      return;
    }
    try {
      state.stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'user' }, audio: false });
    } catch (failure) {
      const refused = failure?.name === 'NotAllowedError' || failure?.name === 'SecurityError';
      report(new ApiError(400, refused ? t('face.camera_refused') : t('face.no_camera')), error, picker.input);
      return;
    }
    video.srcObject = state.stream;
    video.hidden = false;
    start.hidden = true;
    capture.hidden = false;
    capture.focus();
  });

  capture.addEventListener('click', async () => {
    if (!state.stream) return;
    // A click before the camera's first frame (a slow camera, a busy machine) waits for it rather than doing nothing.
    if (!video.videoWidth) {
      await new Promise((resolve) => {
        video.addEventListener('loadeddata', resolve, { once: true });
        setTimeout(resolve, 5000);
      });
    }
    if (!state.stream || !video.videoWidth) {
      report(new ApiError(400, t('face.no_picture_yet')), error, picker.input);
      return;
    }
    const blob = await jpegOf(video, video.videoWidth, video.videoHeight);
    state.stopCamera();
    state.setPhoto(blob);
  });
}

/** "Retake photo" and the file picker. */
function wireRetakeAndPicker(ui, state) {
  const { preview, start, use, retake, picker } = ui;
  retake.addEventListener('click', () => {
    state.photo = null;
    preview.hidden = true;
    use.hidden = true;
    retake.hidden = true;
    picker.input.value = '';
    start.hidden = false;
    start.focus();
  });

  picker.input.addEventListener('change', async () => {
    clearFieldError(picker);
    const file = picker.input.files?.[0];
    if (!file) return;
    try {
      const bitmap = await createImageBitmap(file);
      const blob = await jpegOf(bitmap, bitmap.width, bitmap.height);
      bitmap.close();
      state.stopCamera();
      start.hidden = true;
      state.setPhoto(blob);
    } catch {
      report(new ApiError(400, 'unsupported_media_type'), picker, picker.input);
    }
  });
}

/** "Use this photo": sends it; a refusal says how many attempts are left. */
function wireUse(ctx, ui, state) {
  const { attempts, use, retake, error } = ui;
  use.addEventListener('click', () =>
    busy(use, t('face.checking'), async () => {
      if (!state.photo) return;
      error.clear();
      try {
        const result = await postBytes('/face', state.photo);
        announce(t('face.passed'));
        state.stopCamera();
        await ctx.refresh();
        return result;
      } catch (failure) {
        if (ctx.failed(failure)) return;
        const left = failure instanceof ApiError ? attemptsLeftOf(failure.problemFor('image')) : null;
        if (left !== null) attempts.textContent = attemptsLeftText(left);
        report(failure, error, retake);
      }
    }),
  );
}

export function faceStep(ctx, check) {
  const ui = faceElements(ctx, check);
  const state = photoState(ui);
  ctx.onLeave(() => {
    state.stopCamera();
    if (state.previewUrl) URL.revokeObjectURL(state.previewUrl);
  });
  wireCamera(ui, state);
  wireRetakeAndPicker(ui, state);
  wireUse(ctx, ui, state);

  return h(
    'div',
    { class: 'step', dataset: { step: 'face' } },
    ui.heading,
    ui.intro,
    ui.attempts,
    h('div', { class: 'camera-frame' }, ui.video, ui.preview),
    h('div', { class: 'actions' }, ui.start, ui.capture, ui.use, ui.retake),
    ui.error.el,
    ui.picker.wrapper,
  );
}
